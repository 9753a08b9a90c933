//! E-commerce responses (Shopify- and Stripe-like): an order, a paginated product listing,
//! a validation error. Money is integer cents written as decimal strings.

use super::json::{Json, int, money, or_null, s};
use super::rng::{BASE62, Rng};
use super::text::{FIRST, LAST, TECH, iso, moment, paragraph, slug};

const SHOP: &str = "https://shop.example.com";
const CDN: &str = "https://cdn.example-shop.com";
/// Products in the catalogue, popular-first.
const PRODUCTS: usize = 6000;
/// Customers, popular-first.
const CUSTOMERS: usize = 20_000;

/// Cities: name, region, country code, a postal code's first digits.
pub const CITIES: &[(&str, &str, &str, &str)] = &[
    ("Austin", "TX", "US", "787"),
    ("Portland", "OR", "US", "972"),
    ("Chicago", "IL", "US", "606"),
    ("Brooklyn", "NY", "US", "112"),
    ("Toronto", "ON", "CA", "M5V"),
    ("London", "England", "GB", "EC1"),
    ("Berlin", "BE", "DE", "101"),
    ("München", "BY", "DE", "803"),
    ("Lyon", "ARA", "FR", "690"),
    ("Madrid", "MD", "ES", "280"),
    ("Kraków", "MA", "PL", "31-"),
    ("Osaka", "27", "JP", "530"),
    ("Sydney", "NSW", "AU", "200"),
    ("São Paulo", "SP", "BR", "014"),
];
const STREETS: &[&str] = &[
    "Main St",
    "Oak Avenue",
    "Market Street",
    "High Street",
    "Elm Road",
    "Park Lane",
    "Hauptstraße",
    "Rue de la Paix",
    "Calle Mayor",
    "Queen Street W",
];
const ADJECTIVES: &[&str] = &[
    "Classic",
    "Everyday",
    "Organic",
    "Premium",
    "Slim",
    "Relaxed",
    "Vintage",
    "Lightweight",
    "Waterproof",
    "Recycled",
    "Essential",
    "Heritage",
];
const MATERIALS: &[&str] = &[
    "Cotton", "Linen", "Wool", "Leather", "Canvas", "Denim", "Merino", "Bamboo", "Steel",
];
const NOUNS: &[(&str, &str)] = &[
    ("T-Shirt", "Apparel/Tops/T-Shirts"),
    ("Hoodie", "Apparel/Tops/Sweatshirts"),
    ("Jacket", "Apparel/Outerwear/Jackets"),
    ("Chinos", "Apparel/Bottoms/Trousers"),
    ("Sneakers", "Footwear/Sneakers"),
    ("Backpack", "Bags/Backpacks"),
    ("Tote Bag", "Bags/Totes"),
    ("Water Bottle", "Home/Kitchen/Drinkware"),
    ("Beanie", "Accessories/Hats"),
    ("Socks", "Apparel/Socks"),
];
const COLORS: &[&str] = &[
    "Black", "White", "Navy", "Olive", "Grey", "Sand", "Burgundy",
];
const SIZES: &[&str] = &["XS", "S", "M", "L", "XL"];
const CURRENCIES: &[&str] = &["USD", "USD", "USD", "EUR", "GBP", "CAD"];

/// A catalogue product: the same index, the same product in every response.
struct Product {
    id: String,
    sku: String,
    name: String,
    category: usize,
    price: u64,
}

fn product(index: usize) -> Product {
    let mut rng = Rng::keyed(0x5e11, index as u64);
    let category = rng.below(NOUNS.len() as u64) as usize;
    let adjective = *rng.pick(ADJECTIVES);
    let material = *rng.pick(MATERIALS);
    let noun = NOUNS[category].0;
    Product {
        id: format!("prod_{}", rng.token(BASE62, 14)),
        sku: format!(
            "{}-{}-{:04}",
            &slug(noun)[..2].to_uppercase(),
            &material[..3].to_uppercase(),
            index
        ),
        name: format!("{adjective} {material} {noun}"),
        category,
        price: 500 + rng.below(40) * 250 - 1,
    }
}

fn address(rng: &mut Rng, name: &str) -> Json {
    let (city, region, country, postal) = *rng.pick(CITIES);
    Json::Obj(vec![
        ("name", s(name)),
        (
            "line1",
            s(format!("{} {}", rng.range(1, 2400), rng.pick(STREETS))),
        ),
        (
            "line2",
            or_null(
                rng.chance(30)
                    .then(|| s(format!("Apt {}", rng.range(1, 60)))),
            ),
        ),
        ("city", s(city)),
        ("region", s(region)),
        ("postal_code", s(format!("{postal}{:02}", rng.below(100)))),
        ("country", s(country)),
    ])
}

/// A member of the customer population: the same index, the same person, id, phone and
/// home address in every order.
struct Customer {
    index: u64,
    first: &'static str,
    last: &'static str,
    id: String,
    phone: Option<String>,
}

fn customer_at(index: usize) -> Customer {
    let mut rng = Rng::keyed(0xc057, index as u64);
    let first = *rng.pick(FIRST);
    let last = *rng.pick(LAST);
    let id = format!("cus_{}", rng.token(BASE62, 14));
    let phone = rng
        .chance(50)
        .then(|| format!("+1 555 {:03} {:04}", rng.below(1000), rng.below(10_000)));
    Customer {
        index: index as u64,
        first,
        last,
        id,
        phone,
    }
}

impl Customer {
    fn name(&self) -> String {
        format!("{} {}", self.first, self.last)
    }

    fn email(&self) -> String {
        format!(
            "{}.{}{}@example.com",
            slug(self.first),
            slug(self.last),
            self.index % 100
        )
    }

    fn home(&self) -> Json {
        address(&mut Rng::keyed(0x401e, self.index), &self.name())
    }

    fn json(&self, rng: &mut Rng) -> Json {
        Json::Obj(vec![
            ("id", s(self.id.clone())),
            ("email", s(self.email())),
            ("first_name", s(self.first)),
            ("last_name", s(self.last)),
            ("phone", or_null(self.phone.clone().map(s))),
            ("accepts_marketing", Json::Bool(self.index % 5 < 2)),
            ("orders_count", int(rng.skewed(60) as i64 + 1)),
        ])
    }
}

/// A popular-first customer of the population.
fn some_customer(rng: &mut Rng) -> Customer {
    customer_at(rng.skewed(CUSTOMERS))
}

/// The id of a product's variant: the same product, colour and size, the same id.
fn variant_id(p: &Product, color: &str, size: &str) -> String {
    let key = p.sku.bytes().chain(color.bytes()).chain(size.bytes());
    let seed = key.fold(0u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("var_{}", Rng::new(seed).token(BASE62, 14))
}

/// One order line and its total in cents.
fn line_item(rng: &mut Rng, tax_rate: u64) -> (Json, u64) {
    let p = product(rng.skewed(PRODUCTS));
    let quantity = if rng.chance(75) { 1 } else { rng.range(2, 5) };
    let total = p.price * quantity;
    let tax = total * tax_rate / 10_000;
    let color = *rng.pick(COLORS);
    let size = *rng.pick(SIZES);
    let json = Json::Obj(vec![
        ("id", s(format!("li_{}", rng.token(BASE62, 14)))),
        ("product_id", s(p.id.clone())),
        ("variant_id", s(variant_id(&p, color, size))),
        (
            "sku",
            s(format!("{}-{}-{size}", p.sku, &color[..3].to_uppercase())),
        ),
        ("name", s(format!("{} - {color} / {size}", p.name))),
        ("quantity", int(quantity as i64)),
        ("unit_price", money(p.price)),
        ("total", money(total)),
        (
            "tax_lines",
            Json::Arr(vec![Json::Obj(vec![
                ("title", s("Sales Tax")),
                ("rate", s(format!("0.{tax_rate:04}"))),
                ("amount", money(tax)),
            ])]),
        ),
        ("requires_shipping", Json::Bool(true)),
        ("gift_card", Json::Bool(false)),
        ("properties", Json::Obj(vec![])),
    ]);
    (json, total)
}

const STATUSES: &[&str] = &[
    "paid",
    "paid",
    "fulfilled",
    "fulfilled",
    "pending",
    "refunded",
];
const SOURCES: &[&str] = &["web", "web", "ios", "android", "pos"];

/// An order (`GET /v1/orders/{id}`): customer, addresses, lines, totals, payment.
pub fn order(rng: &mut Rng) -> Json {
    let buyer = some_customer(rng);
    let name = buyer.name();
    let customer = buyer.json(rng);
    let tax_rate = rng.range(0, 1000);
    let lines: Vec<(Json, u64)> = (0..1 + rng.skewed(8))
        .map(|_| line_item(rng, tax_rate))
        .collect();
    let subtotal: u64 = lines.iter().map(|(_, total)| total).sum();
    let discount = if rng.chance(25) { subtotal / 10 } else { 0 };
    let shipping = if subtotal > 7500 { 0 } else { 599 };
    let tax = (subtotal - discount) * tax_rate / 10_000;
    let status = *rng.pick(STATUSES);
    let created = moment(rng);
    let ship_to = if rng.chance(85) {
        buyer.home()
    } else {
        address(rng, &name)
    };
    let bill_to = if rng.chance(70) {
        ship_to.clone()
    } else {
        address(rng, &name)
    };
    let mut fields = vec![
        ("id", s(format!("ord_{}", rng.token(BASE62, 24)))),
        ("object", s("order")),
        ("number", int(rng.range(1001, 250_000) as i64)),
        ("status", s(status)),
        ("currency", s(*rng.pick(CURRENCIES))),
        ("created_at", s(iso(created))),
        ("updated_at", s(iso(created + rng.below(2_000_000)))),
        ("customer", customer),
        ("shipping_address", ship_to),
        ("billing_address", bill_to),
        (
            "line_items",
            Json::Arr(lines.into_iter().map(|(json, _)| json).collect()),
        ),
        ("discounts", discounts(discount)),
        ("subtotal", money(subtotal)),
        ("discount_total", money(discount)),
        ("shipping_total", money(shipping)),
        ("tax_total", money(tax)),
        ("total", money(subtotal - discount + shipping + tax)),
    ];
    fields.extend(order_tail(rng, status, created));
    Json::Obj(fields)
}

fn discounts(amount: u64) -> Json {
    if amount == 0 {
        return Json::Arr(vec![]);
    }
    Json::Arr(vec![Json::Obj(vec![
        ("code", s("WELCOME10")),
        ("type", s("percentage")),
        ("value", s("10.00")),
        ("amount", money(amount)),
    ])])
}

fn order_tail(rng: &mut Rng, status: &str, created: u64) -> Vec<(&'static str, Json)> {
    let brand = *rng.pick(&["visa", "mastercard", "amex", "discover"]);
    let payment = Json::Obj(vec![
        ("method", s("card")),
        ("brand", s(brand)),
        ("last4", s(format!("{:04}", rng.below(10_000)))),
        (
            "status",
            s(if status == "pending" {
                "authorized"
            } else {
                "captured"
            }),
        ),
        (
            "captured_at",
            or_null((status != "pending").then(|| s(iso(created + 40)))),
        ),
    ]);
    let fulfillments = if status == "fulfilled" {
        let tracking = format!("1Z{}", rng.token(b"0123456789ABCDEFGHJKLMNPRSTUVWXYZ", 16));
        vec![Json::Obj(vec![
            ("id", s(format!("ful_{}", rng.token(BASE62, 14)))),
            ("status", s("success")),
            ("carrier", s("UPS")),
            ("tracking_number", s(tracking.clone())),
            (
                "tracking_url",
                s(format!("https://www.ups.com/track?tracknum={tracking}")),
            ),
            ("shipped_at", s(iso(created + rng.range(3600, 400_000)))),
        ])]
    } else {
        vec![]
    };
    let note = rng.chance(15).then(|| s(paragraph(rng, 1)));
    let campaign = rng
        .chance(30)
        .then(|| s(format!("{}-{}", rng.pick(TECH), rng.range(2019, 2025))));
    vec![
        ("payment", payment),
        ("fulfillments", Json::Arr(fulfillments)),
        ("note", or_null(note)),
        ("tags", Json::Arr(vec![])),
        (
            "metadata",
            Json::Obj(vec![
                ("source", s(*rng.pick(SOURCES))),
                ("campaign", or_null(campaign)),
            ]),
        ),
    ]
}

/// A product as listed by `GET /v1/products?page=N`.
pub fn product_json(rng: &mut Rng) -> Json {
    let index = rng.skewed(PRODUCTS);
    let p = product(index);
    let (noun, path) = NOUNS[p.category];
    let slug_name = slug(&p.name);
    let images = (0..rng.range(1, 4)).map(|n| image(&p, n)).collect();
    let variants = (0..rng.range(1, 6)).map(|_| variant(rng, &p)).collect();
    let created = moment(rng);
    let on_sale = rng.chance(20);
    let price = |cents| Json::Obj(vec![("amount", money(cents)), ("currency", s("USD"))]);
    let sentences = rng.range(1, 4);
    let description = paragraph(rng, sentences);
    let average = format!("{}.{}", rng.range(3, 4), rng.below(10));
    let brand = format!(
        "{} {}",
        rng.pick(LAST),
        rng.pick(&["Co.", "Supply", "Goods"])
    );
    let tags = (0..rng.below(4))
        .map(|_| s(slug(rng.pick::<&str>(MATERIALS))))
        .collect();
    Json::Obj(vec![
        ("id", s(p.id.clone())),
        ("sku", s(p.sku.clone())),
        ("name", s(p.name.clone())),
        ("slug", s(slug_name.clone())),
        ("url", s(format!("{SHOP}/products/{slug_name}"))),
        ("description", s(description)),
        ("brand", s(brand)),
        (
            "category",
            Json::Obj(vec![
                ("id", int(100 + p.category as i64)),
                ("name", s(noun)),
                ("path", s(path)),
            ]),
        ),
        ("price", price(p.price)),
        (
            "compare_at_price",
            or_null(on_sale.then(|| price(p.price * 5 / 4))),
        ),
        ("in_stock", Json::Bool(rng.chance(85))),
        ("inventory_quantity", int(rng.below(500) as i64)),
        (
            "rating",
            Json::Obj(vec![
                ("average", Json::Num(average)),
                ("count", int(rng.skewed(2000) as i64)),
            ]),
        ),
        ("tags", Json::Arr(tags)),
        ("images", Json::Arr(images)),
        ("variants", Json::Arr(variants)),
        ("created_at", s(iso(created))),
        ("updated_at", s(iso(created + rng.below(30_000_000)))),
    ])
}

fn image(p: &Product, n: u64) -> Json {
    Json::Obj(vec![
        ("url", s(format!("{CDN}/products/{}/{n}.jpg", p.id))),
        ("alt", s(format!("{} - view {}", p.name, n + 1))),
        ("width", int(1200)),
        ("height", int(if n == 0 { 1200 } else { 1600 })),
    ])
}

fn variant(rng: &mut Rng, p: &Product) -> Json {
    let color = *rng.pick(COLORS);
    let size = *rng.pick(SIZES);
    Json::Obj(vec![
        ("id", s(variant_id(p, color, size))),
        (
            "sku",
            s(format!("{}-{}-{size}", p.sku, &color[..3].to_uppercase())),
        ),
        ("title", s(format!("{size} / {color}"))),
        (
            "options",
            Json::Obj(vec![("size", s(size)), ("color", s(color))]),
        ),
        ("price", money(p.price)),
        ("available", Json::Bool(rng.chance(80))),
    ])
}

/// The envelope around a page of `items`: the data, then the paging metadata and links.
pub fn page(rng: &mut Rng, items: Vec<Json>) -> Json {
    let per_page = [10, 20, 25, 50][rng.below(4) as usize];
    let total_pages = rng.range(1, 80);
    let page = rng.range(1, total_pages);
    let link = |n: u64| s(format!("{SHOP}/v1/products?page={n}&per_page={per_page}"));
    Json::Obj(vec![
        ("data", Json::Arr(items)),
        (
            "meta",
            Json::Obj(vec![
                ("page", int(page as i64)),
                ("per_page", int(per_page)),
                (
                    "total_count",
                    int((total_pages * per_page as u64 - rng.below(per_page as u64)) as i64),
                ),
                ("total_pages", int(total_pages as i64)),
            ]),
        ),
        (
            "links",
            Json::Obj(vec![
                ("self", link(page)),
                ("first", link(1)),
                ("prev", or_null((page > 1).then(|| link(page - 1)))),
                (
                    "next",
                    or_null((page < total_pages).then(|| link(page + 1))),
                ),
                ("last", link(total_pages)),
            ]),
        ),
    ])
}

const FIELDS: &[&str] = &[
    "email",
    "quantity",
    "postal_code",
    "variant_id",
    "title",
    "name",
];
const CODES: &[(&str, &str)] = &[
    ("missing_field", "is required"),
    ("invalid", "is invalid"),
    ("too_long", "is too long (maximum is 255 characters)"),
    ("already_exists", "has already been taken"),
];

/// A validation error (422): what failed and where, with a documentation link.
pub fn validation_error(rng: &mut Rng) -> Json {
    let errors = (0..rng.range(1, 3))
        .map(|_| {
            let field = *rng.pick(FIELDS);
            let (code, message) = *rng.pick(CODES);
            Json::Obj(vec![
                (
                    "resource",
                    s(*rng.pick(&["Order", "LineItem", "Customer", "Issue"])),
                ),
                ("field", s(field)),
                ("code", s(code)),
                ("message", s(format!("{field} {message}"))),
            ])
        })
        .collect();
    Json::Obj(vec![
        ("message", s("Validation Failed")),
        ("errors", Json::Arr(errors)),
        (
            "documentation_url",
            s("https://docs.example.com/rest/overview/errors#validation"),
        ),
        ("status", s("422")),
        ("request_id", s(format!("req_{}", rng.token(BASE62, 20)))),
    ])
}

/// An order as summarised by `GET /v1/orders?limit=N` (Stripe-like list).
pub fn order_summary(rng: &mut Rng) -> Json {
    let id = format!("ord_{}", rng.token(BASE62, 24));
    let buyer = some_customer(rng);
    let status = *rng.pick(STATUSES);
    let created = moment(rng);
    Json::Obj(vec![
        ("id", s(id.clone())),
        ("object", s("order")),
        ("number", int(rng.range(1001, 250_000) as i64)),
        ("status", s(status)),
        ("currency", s(*rng.pick(CURRENCIES))),
        ("total", money(rng.range(499, 40_000))),
        ("items_count", int(1 + rng.skewed(8) as i64)),
        ("customer_email", s(buyer.email())),
        ("created_at", s(iso(created))),
        (
            "fulfilled_at",
            or_null((status == "fulfilled").then(|| s(iso(created + rng.range(3600, 400_000))))),
        ),
        ("url", s(format!("{SHOP}/v1/orders/{id}"))),
    ])
}

/// A Stripe-like list envelope: `object`, `data`, `has_more`, `url`.
pub fn list(rng: &mut Rng, items: Vec<Json>) -> Json {
    Json::Obj(vec![
        ("object", s("list")),
        ("data", Json::Arr(items)),
        ("has_more", Json::Bool(rng.chance(70))),
        ("url", s("/v1/orders")),
    ])
}
