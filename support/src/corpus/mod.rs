//! A corpus of realistic API JSON responses for the dictionary tests, benches and measuring
//! programs: deterministic from a seed, with no dependency beyond `std`.
//!
//! # What it generates
//!
//! Each response is one endpoint's body, pretty-printed as real APIs serve it (two-space
//! indent, `"key": value`, keys in the API's order, UTF-8 as is, no trailing newline). The
//! endpoints, by share of responses:
//!
//! | share | endpoint | body | median size |
//! |---|---|---|---|
//! | 14% | GitHub `GET /repos/{o}/{r}/issues` | array of one repository's issues, newest first (numbers and times descending): URLs, ids, `node_id`, title, user, labels, assignee, timestamps, `closed_at` null or not, Markdown body (CRLF, templates, code blocks) from one line to a few KiB, reactions | 4.6 KiB |
//! | 5% | GitHub `GET /orgs/{o}/repos` | array of one organisation's repositories: owner, 36 URL templates, counts, license object or null, topics | 5.9 KiB |
//! | 6% | GitHub `GET /repos/{o}/{r}/commits` | array of one repository's commits, newest first: random 40-hex SHAs, author and committer, message, verification, parents | 4.3 KiB |
//! | 9% | GitHub `GET /search/users` | `total_count`, `incomplete_results`, `items` of users with a score | 2.3 KiB |
//! | 12% | GitHub `GET /users/{login}` | one profile: the user object and nullable profile fields | 1.4 KiB |
//! | 16% | shop `GET /v1/orders/{id}` | one order: customer, shipping and billing addresses, 1-8 lines with taxes, discounts, totals that add up, payment, fulfilment with tracking | 2.7 KiB |
//! | 14% | shop `GET /v1/orders?limit=N` | Stripe-like list envelope (`object`, `data`, `has_more`, `url`) of order summaries | 2.1 KiB |
//! | 16% | shop `GET /v1/products?page=N` | `data` (products: price objects, variants, images, rating, free-text description), `meta` paging numbers, `links` with null `prev`/`next` at the ends | 3.4 KiB |
//! | 8% | a 422 validation error | message, 1-3 field errors, documentation URL, request id | 0.5 KiB |
//!
//! Values come from fixed populations, popular members far more often (as on a real API):
//! 4,000 users and 40 organisations (login, name, id fixed per member), 25 repositories per
//! organisation, 6,000 products (variant ids fixed per product, colour and size), 20,000
//! customers (id, e-mail, phone, home address fixed), 58 first names and 44 family names (a
//! few non-ASCII), 14 cities. Free text is drawn from ~280 words, the common ones far more
//! often. Ids are realistic in form: numeric ids of
//! 4-10 digits, base64 `node_id`s, `ord_`/`prod_`/`var_` ids of 14-24 random base-62
//! characters, random SHAs: some bytes of every response no dictionary can predict.
//! Timestamps are ISO 8601 UTC between 2019 and 2025.
//!
//! Sizes: list endpoints are filled to a target size drawn per response: 300-700 B 8%,
//! 0.7-1 KiB 12%, 1-2 KiB 35%, 2-4 KiB 27%, 4-8 KiB 9%, 8-16 KiB 5%, 16-32 KiB 2.5%,
//! 32-64 KiB 1.5% (uniform within each range; a list has at least one item, and stops
//! before 64 KiB), so a list of large items (an issue is 2.5-7 KiB) overshoots small
//! targets. Single objects have their natural sizes: profiles 1.3-1.6 KiB, orders
//! 1.7-5.8 KiB, errors 320-680 B. [`responses`]`(2000, 1)`: 323 B to 63 KiB, median
//! 2.8 KiB; 11% under 1 KiB, 58% 1-4 KiB, 27% 4-16 KiB, 3% 16-64 KiB (the corpus's test
//! `sizes_are_mostly_one_to_four_kib` prints these, and the median of each shape).
//!
//! # Training and held-out sets
//!
//! [`split`] puts every fourth response of one seed into the held-out set and drops any
//! held-out body equal to a training one: the two sets never share a response. They do
//! share what responses of one API share (field names, URL prefixes, popular users).

mod github;
mod json;
mod recorded;
mod rng;
mod shop;
mod text;

pub use recorded::{
    CORPUS_ENV, HELD_OUT_BODIES, Recorded, RecordedSplit, recorded, recorded_path, recorded_split,
};

use json::{Json, int};
use rng::Rng;

/// The kinds of response (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Issues,
    Repos,
    Commits,
    SearchUsers,
    User,
    Order,
    OrderList,
    Products,
    ValidationError,
}

impl Shape {
    /// Every shape, with its share in percent.
    pub const MIX: &'static [(Shape, u64)] = &[
        (Shape::Issues, 14),
        (Shape::Repos, 5),
        (Shape::Commits, 6),
        (Shape::SearchUsers, 9),
        (Shape::User, 12),
        (Shape::Order, 16),
        (Shape::OrderList, 14),
        (Shape::Products, 16),
        (Shape::ValidationError, 8),
    ];

    /// The API the shape belongs to: `"github"` or `"shop"` (a deploy would serve each
    /// its own dictionary, under its own `match` pattern).
    pub fn api(self) -> &'static str {
        match self {
            Shape::Issues | Shape::Repos | Shape::Commits | Shape::SearchUsers | Shape::User => {
                "github"
            }
            Shape::Order | Shape::OrderList | Shape::Products | Shape::ValidationError => "shop",
        }
    }

    fn draw(rng: &mut Rng) -> Shape {
        let mut roll = rng.below(100);
        for &(shape, share) in Shape::MIX {
            if roll < share {
                return shape;
            }
            roll -= share;
        }
        unreachable!("the shares add up to 100")
    }
}

/// One generated response.
#[derive(Clone, Debug)]
pub struct Response {
    pub shape: Shape,
    pub body: Vec<u8>,
}

/// `n` responses for `seed`: the same pair gives the same bytes; response `i` does not
/// depend on `n`.
pub fn responses(n: usize, seed: u64) -> Vec<Response> {
    (0..n)
        .map(|i| {
            let mut rng = Rng::keyed(seed, i as u64);
            let shape = Shape::draw(&mut rng);
            let body = generate(shape, &mut rng).pretty(0).into_bytes();
            Response { shape, body }
        })
        .collect()
}

/// The bodies of [`responses`]`(n, seed)`.
pub fn bodies(n: usize, seed: u64) -> Vec<Vec<u8>> {
    responses(n, seed).into_iter().map(|r| r.body).collect()
}

/// `n` responses of one shape.
pub fn bodies_of(shape: Shape, n: usize, seed: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut rng = Rng::keyed(seed ^ 0x5a4e, i as u64);
            generate(shape, &mut rng).pretty(0).into_bytes()
        })
        .collect()
}

/// Training and held-out responses that never share a body.
#[derive(Clone, Debug)]
pub struct Split {
    pub training: Vec<Vec<u8>>,
    pub held_out: Vec<Vec<u8>>,
}

/// [`bodies`]`(n, seed)`, every fourth held out (less any equal to a training body).
pub fn split(n: usize, seed: u64) -> Split {
    split_of(responses(n, seed).into_iter().map(|r| r.body))
}

/// The responses of [`responses`]`(n, seed)` from one API ([`Shape::api`]), split as
/// [`split`] does.
pub fn split_api(n: usize, seed: u64, api: &str) -> Split {
    let of_api = responses(n, seed)
        .into_iter()
        .filter(|r| r.shape.api() == api);
    split_of(of_api.map(|r| r.body))
}

fn split_of(bodies: impl Iterator<Item = Vec<u8>>) -> Split {
    let mut training = Vec::new();
    let mut held_out = Vec::new();
    for (i, body) in bodies.enumerate() {
        if i % 4 == 3 {
            held_out.push(body);
        } else {
            training.push(body);
        }
    }
    let seen: std::collections::HashSet<&[u8]> = training.iter().map(Vec::as_slice).collect();
    let held_out = held_out
        .iter()
        .filter(|body| !seen.contains(body.as_slice()))
        .cloned()
        .collect();
    Split { training, held_out }
}

/// The most a generated response may have.
const MAX_LEN: usize = 64 * 1024;

/// A target size for a list response (the module's size table).
fn target(rng: &mut Rng) -> usize {
    const RANGES: &[(u64, u64, u64)] = &[
        (80, 300, 700),
        (120, 700, 1024),
        (350, 1024, 2048),
        (270, 2048, 4096),
        (90, 4096, 8192),
        (50, 8192, 16_384),
        (25, 16_384, 32_768),
        (15, 32_768, 65_536),
    ];
    let mut roll = rng.below(1000);
    for &(share, lo, hi) in RANGES {
        if roll < share {
            return rng.range(lo, hi - 1) as usize;
        }
        roll -= share;
    }
    unreachable!("the shares add up to 1000")
}

fn generate(shape: Shape, rng: &mut Rng) -> Json {
    let target = target(rng);
    match shape {
        Shape::Issues => {
            let mut list = github::listing(rng);
            Json::Arr(fill(rng, target, 1, |rng| github::issue(rng, &mut list)))
        }
        Shape::Repos => {
            let mut list = github::listing(rng);
            Json::Arr(fill(rng, target, 1, |rng| github::repo(rng, &mut list)))
        }
        Shape::Commits => {
            let mut list = github::listing(rng);
            Json::Arr(fill(rng, target, 1, |rng| github::commit(rng, &mut list)))
        }
        Shape::SearchUsers => {
            let items = fill(rng, target.saturating_sub(60), 2, github::search_hit);
            Json::Obj(vec![
                (
                    "total_count",
                    int(items.len() as i64 + rng.skewed(5000) as i64),
                ),
                ("incomplete_results", Json::Bool(false)),
                ("items", Json::Arr(items)),
            ])
        }
        Shape::User => github::profile(rng),
        Shape::Order => shop::order(rng),
        Shape::OrderList => {
            let items = fill(rng, target.saturating_sub(80), 2, shop::order_summary);
            shop::list(rng, items)
        }
        Shape::Products => {
            // The envelope's paging metadata and links take ~450 bytes.
            let items = fill(rng, target.saturating_sub(450), 2, shop::product_json);
            shop::page(rng, items)
        }
        Shape::ValidationError => shop::validation_error(rng),
    }
}

/// Items made by `make` until their printed size (at `depth`) reaches `target`: at least
/// one, and never past [`MAX_LEN`].
fn fill(
    rng: &mut Rng,
    target: usize,
    depth: usize,
    mut make: impl FnMut(&mut Rng) -> Json,
) -> Vec<Json> {
    let mut items = Vec::new();
    let mut size = 4;
    while size < target {
        let item = make(rng);
        let len = item.pretty(depth).len() + 2 * depth + 2;
        if !items.is_empty() && size + len > MAX_LEN - 1024 {
            break;
        }
        size += len;
        items.push(item);
    }
    items
}

#[cfg(test)]
mod tests;
