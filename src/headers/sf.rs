//! Structured Field values (RFC 9651) read through `sfv`'s visitors into the little the
//! dictionary headers need: one bare item, or a dictionary's members as bare items and
//! inner lists of them (parameters are validated and ignored). No map is built, so `sfv`
//! runs without its parsed types.

use std::convert::Infallible;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, Ignored, InnerListVisitor, ItemVisitor, ParameterVisitor,
};
use sfv::{BareItemFromInput, KeyRef, Parser};

/// One dictionary member's value.
pub(super) enum Member<'a> {
    Item(BareItemFromInput<'a>),
    InnerList(Vec<BareItemFromInput<'a>>),
}

/// The bare item of an SF item (`None` when the value is not one).
pub(super) fn item(value: &[u8]) -> Option<BareItemFromInput<'_>> {
    let mut found = Vec::with_capacity(1);
    Parser::new(value)
        .parse_item_with_visitor(Push(&mut found))
        .ok()?;
    found.pop()
}

/// An SF dictionary's members, each key once (the last of duplicates, as RFC 9651 section
/// 4.2.2 says); `None` when the value is not a dictionary.
pub(super) fn dictionary(value: &[u8]) -> Option<Members<'_>> {
    let mut members = Members(Vec::new());
    Parser::new(value)
        .parse_dictionary_with_visitor(&mut members)
        .ok()?;
    Some(members)
}

/// A dictionary's members in order of first appearance.
pub(super) struct Members<'a>(Vec<(&'a str, Member<'a>)>);

impl<'a> Members<'a> {
    /// The value of member `key`.
    pub(super) fn get(&self, key: &str) -> Option<&Member<'a>> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    fn set(&mut self, key: &'a KeyRef, member: Member<'a>) -> &mut Member<'a> {
        let key = key.as_str();
        let at = match self.0.iter().position(|(k, _)| *k == key) {
            Some(at) => {
                self.0[at].1 = member;
                at
            }
            None => {
                self.0.push((key, member));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }
}

impl<'a> DictionaryVisitor<'a> for Members<'a> {
    type Error = Infallible;

    fn entry(&mut self, key: &'a KeyRef) -> Result<impl EntryVisitor<'a>, Infallible> {
        Ok(Entry { key, members: self })
    }
}

/// The member being parsed.
struct Entry<'m, 'a> {
    key: &'a KeyRef,
    members: &'m mut Members<'a>,
}

impl<'a> ItemVisitor<'a> for Entry<'_, 'a> {
    type Error = Infallible;

    fn bare_item(
        self,
        bare_item: BareItemFromInput<'a>,
    ) -> Result<impl ParameterVisitor<'a>, Infallible> {
        self.members.set(self.key, Member::Item(bare_item));
        Ok(Ignored)
    }
}

impl<'a> EntryVisitor<'a> for Entry<'_, 'a> {
    fn inner_list(self) -> Result<impl InnerListVisitor<'a>, Infallible> {
        match self.members.set(self.key, Member::InnerList(Vec::new())) {
            Member::InnerList(items) => Ok(List(items)),
            Member::Item(_) => unreachable!("just set to an inner list"),
        }
    }
}

/// An inner list being parsed.
struct List<'m, 'a>(&'m mut Vec<BareItemFromInput<'a>>);

impl<'a> InnerListVisitor<'a> for List<'_, 'a> {
    type Error = Infallible;

    fn item(&mut self) -> Result<impl ItemVisitor<'a>, Infallible> {
        Ok(Push(self.0))
    }

    fn finish(self) -> Result<impl ParameterVisitor<'a>, Infallible> {
        Ok(Ignored)
    }
}

/// An inner list's next item, or a lone item.
struct Push<'m, 'a>(&'m mut Vec<BareItemFromInput<'a>>);

impl<'a> ItemVisitor<'a> for Push<'_, 'a> {
    type Error = Infallible;

    fn bare_item(
        self,
        bare_item: BareItemFromInput<'a>,
    ) -> Result<impl ParameterVisitor<'a>, Infallible> {
        self.0.push(bare_item);
        Ok(Ignored)
    }
}
