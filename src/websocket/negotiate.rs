//! RFC 7692 section 7.1: the server's answer to a client's offers, and the client's offer
//! and its check of the answer. The result is an [`Agreement`]: per direction, whether
//! the history is kept between messages and its window.

use http::HeaderMap;

use super::config::{DeflateConfig, Reservation};
use super::params::{Bits, Element, Invalid, PERMESSAGE_DEFLATE, Params, elements};
use super::stats;

/// What one direction of a connection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Direction {
    /// The LZ77 history is kept between messages (context takeover).
    pub takeover: bool,
    /// The window, in bits (9-15).
    pub window_bits: u8,
}

/// What a handshake agreed: each direction's parameters, the header value sent (server) or
/// received (client), and the budget reservation for parked windows.
#[derive(Debug)]
pub struct Agreement {
    /// What this side sends.
    pub outbound: Direction,
    /// What this side receives.
    pub inbound: Direction,
    pub(crate) header: String,
    pub(crate) reservations: Vec<Reservation>,
}

impl Agreement {
    /// The `Sec-WebSocket-Extensions` value of the answer.
    pub fn header(&self) -> &str {
        &self.header
    }
}

/// The server's answer: the first acceptable permessage-deflate offer, or `None` (no
/// offer, or every one declined: the connection goes on uncompressed).
pub(crate) fn answer(headers: &HeaderMap, config: &DeflateConfig) -> Option<Agreement> {
    let offers = elements(headers)?;
    offers
        .iter()
        .filter(|e| e.name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE))
        .find_map(|offer| answer_one(offer, config))
}

fn answer_one(offer: &Element, config: &DeflateConfig) -> Option<Agreement> {
    let params = match Params::parse(offer) {
        Ok(params) => params,
        Err(why) => return declined(why),
    };
    // Our outbound window: at most what the client allows (section 7.1.2.1); zlib cannot
    // do 8 for raw deflate, so an offer asking for 8 is declined and the next one tried.
    let out_bits = match params.server_max_window_bits {
        Bits::Absent => config.max_window_bits,
        Bits::Bare | Bits::Value(8) => return declined(Invalid::BadValue),
        Bits::Value(n) => n.min(config.max_window_bits),
    };
    // The client's window: only shrinkable when it offered the parameter (7.1.2.2).
    let in_bits = match params.client_max_window_bits {
        Bits::Absent => 15,
        Bits::Bare => config.max_window_bits,
        Bits::Value(8) => return declined(Invalid::BadValue),
        Bits::Value(n) => n.min(config.max_window_bits),
    };
    let want_out = config.context_takeover && !params.server_no_context_takeover;
    let want_in = config.context_takeover && !params.client_no_context_takeover;
    let bytes = (usize::from(want_out) << out_bits) + (usize::from(want_in) << in_bits);
    let reservation = (bytes > 0).then(|| config.budget.reserve(bytes)).flatten();
    let granted = bytes == 0 || reservation.is_some();
    if !granted {
        stats::note_refusal();
    }
    let outbound = Direction {
        takeover: want_out && granted,
        window_bits: out_bits,
    };
    let inbound = Direction {
        takeover: want_in && granted,
        window_bits: in_bits,
    };
    let header = server_header(&params, outbound, inbound);
    Some(Agreement {
        outbound,
        inbound,
        header,
        reservations: reservation.into_iter().collect(),
    })
}

fn declined(why: Invalid) -> Option<Agreement> {
    tracing::debug!(target: stats::TARGET, ?why, "permessage-deflate offer declined");
    None
}

/// The answer's element: no-takeover whenever a direction does not keep its history
/// (section 7.1.1: a server may impose both), windows where they were offered or shrunk.
fn server_header(params: &Params, outbound: Direction, inbound: Direction) -> String {
    let mut header = String::from(PERMESSAGE_DEFLATE);
    if !outbound.takeover {
        header.push_str("; server_no_context_takeover");
    }
    if !inbound.takeover {
        header.push_str("; client_no_context_takeover");
    }
    if params.server_max_window_bits != Bits::Absent || outbound.window_bits < 15 {
        header.push_str(&format!(
            "; server_max_window_bits={}",
            outbound.window_bits
        ));
    }
    if params.client_max_window_bits != Bits::Absent && inbound.window_bits < 15 {
        header.push_str(&format!("; client_max_window_bits={}", inbound.window_bits));
    }
    header
}

/// The client's offer: one element asking for no takeover both ways unless the config
/// allows it, and the windows the config sets.
pub(crate) fn offer(config: &DeflateConfig) -> String {
    let mut header = String::from(PERMESSAGE_DEFLATE);
    if !config.context_takeover {
        header.push_str("; server_no_context_takeover; client_no_context_takeover");
    }
    if config.max_window_bits < 15 {
        header.push_str(&format!(
            "; server_max_window_bits={}",
            config.max_window_bits
        ));
    }
    header.push_str(&format!(
        "; client_max_window_bits={}",
        config.max_window_bits
    ));
    header
}

/// Why a server's answer fails the connection (RFC 7692 section 5: a client that cannot
/// accept the response must fail the WebSocket connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadAnswer {
    /// The header does not parse, or names an extension that was not offered, or twice.
    NotOffered,
    /// A parameter is unknown, duplicated, invalid, or breaks what the offer allowed.
    BadParameter,
}

impl std::fmt::Display for BadAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BadAnswer::NotOffered => "the server answered an extension that was not offered",
            BadAnswer::BadParameter => "the server's permessage-deflate parameters are invalid",
        })
    }
}

impl std::error::Error for BadAnswer {}

/// The client's reading of the server's answer to [`offer`]: `Ok(None)` when the server
/// accepted no extension.
pub(crate) fn accept(
    headers: &HeaderMap,
    config: &DeflateConfig,
) -> Result<Option<Agreement>, BadAnswer> {
    let list = elements(headers).ok_or(BadAnswer::NotOffered)?;
    let element = match list.as_slice() {
        [] => return Ok(None),
        [one] if one.name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE) => one,
        _ => return Err(BadAnswer::NotOffered),
    };
    let params = Params::parse(element).map_err(|_| BadAnswer::BadParameter)?;
    let offered = config.max_window_bits;
    // The server's window: at most what was offered (section 7.1.2.1); its value is a
    // promise about its own compressor, so our inflater (always 15) takes any.
    let in_bits = match params.server_max_window_bits {
        Bits::Absent => 15,
        Bits::Value(n) if (9..=offered).contains(&n) || (offered == 15 && n >= 9) => n,
        _ => return Err(BadAnswer::BadParameter),
    };
    // Ours: only the value we offered or smaller; 8 we cannot produce.
    let out_bits = match params.client_max_window_bits {
        Bits::Absent => offered,
        Bits::Value(n) if (9..=offered).contains(&n) => n,
        _ => return Err(BadAnswer::BadParameter),
    };
    if !config.context_takeover && !params.server_no_context_takeover {
        return Err(BadAnswer::BadParameter); // we asked for it; section 7.1.1.1 binds
    }
    let inbound = Direction {
        takeover: !params.server_no_context_takeover,
        window_bits: in_bits,
    };
    let want_out = config.context_takeover && !params.client_no_context_takeover;
    let mut reservations: Vec<Reservation> = Vec::new();
    reservations.extend(
        want_out
            .then(|| config.budget.reserve(1 << out_bits))
            .flatten(),
    );
    let outbound = Direction {
        takeover: !reservations.is_empty(),
        window_bits: out_bits,
    };
    // The server's takeover cannot be refused: its window is kept whatever the budget.
    if inbound.takeover {
        reservations.push(config.budget.force(1 << in_bits));
    }
    let header = element_text(element);
    Ok(Some(Agreement {
        outbound,
        inbound,
        header,
        reservations,
    }))
}

fn element_text(element: &Element) -> String {
    let mut text = element.name.clone();
    for (key, value) in &element.params {
        text.push_str("; ");
        text.push_str(key);
        if let Some(value) = value {
            text.push('=');
            text.push_str(value);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::websocket::config::WindowBudget;
    use http::HeaderValue;
    use http::header::SEC_WEBSOCKET_EXTENSIONS;

    fn offers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(SEC_WEBSOCKET_EXTENSIONS, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn the_default_answer_imposes_no_takeover_both_ways() {
        let a = answer(
            &offers(&["permessage-deflate; client_max_window_bits"]),
            &DeflateConfig::new(),
        )
        .unwrap();
        assert_eq!(
            a.header(),
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        );
        assert!(!a.outbound.takeover && !a.inbound.takeover);
    }

    #[test]
    fn invalid_and_8_bit_offers_fall_through_to_the_next() {
        let map = offers(&[
            "permessage-deflate; foo, permessage-deflate; server_max_window_bits=8",
            "permessage-deflate; server_max_window_bits, x-webkit-deflate-frame",
            "permessage-deflate; server_max_window_bits=10; client_max_window_bits=12",
        ]);
        let a = answer(&map, &DeflateConfig::new()).unwrap();
        assert_eq!(a.outbound.window_bits, 10);
        assert_eq!(a.inbound.window_bits, 12);
        assert!(a.header().contains("server_max_window_bits=10"));
        assert!(a.header().contains("client_max_window_bits=12"));
        assert!(
            answer(
                &offers(&["permessage-deflate; server_max_window_bits=8"]),
                &DeflateConfig::new()
            )
            .is_none()
        );
        assert!(answer(&offers(&["foo"]), &DeflateConfig::new()).is_none());
    }

    #[test]
    fn takeover_is_granted_within_the_budget_only() {
        let budget = WindowBudget::new(3 << 15);
        let config = DeflateConfig::new()
            .context_takeover(true)
            .budget(budget.clone());
        let first = answer(&offers(&["permessage-deflate"]), &config).unwrap();
        assert!(first.outbound.takeover && first.inbound.takeover);
        assert_eq!(first.header(), "permessage-deflate");
        assert_eq!(budget.held(), 2 << 15);
        let second = answer(&offers(&["permessage-deflate"]), &config).unwrap();
        assert!(!second.outbound.takeover && !second.inbound.takeover);
        drop(first);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_client_checks_the_answer_against_its_offer() {
        let config = DeflateConfig::new().max_window_bits(12);
        assert!(offer(&config).contains("server_max_window_bits=12"));
        let ok = offers(&[
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10",
        ]);
        let a = accept(&ok, &config).unwrap().unwrap();
        assert_eq!((a.inbound.window_bits, a.outbound.window_bits), (10, 12));
        for bad in [
            "permessage-deflate; server_no_context_takeover; server_max_window_bits=13",
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=8",
            "permessage-deflate; server_no_context_takeover; mystery",
            "permessage-deflate",
            "x-other",
        ] {
            assert!(accept(&offers(&[bad]), &config).is_err(), "{bad}");
        }
        assert!(accept(&HeaderMap::new(), &config).unwrap().is_none());
    }
}
