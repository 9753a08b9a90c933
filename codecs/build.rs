//! `cfg(dictionary)`: either dictionary coding is on (`dcz` or `dcb`), so the sources need
//! not spell `cfg(any(feature = "dcz", feature = "dcb"))`; `cfg(both_dictionary_codings)`
//! for the tests that compare them.

fn main() {
    let on = |feature: &str| std::env::var_os(format!("CARGO_FEATURE_{feature}")).is_some();
    let (dcz, dcb) = (on("DCZ"), on("DCB"));
    for (name, set) in [
        ("dictionary", dcz || dcb),
        ("both_dictionary_codings", dcz && dcb),
    ] {
        println!("cargo::rustc-check-cfg=cfg({name})");
        if set {
            println!("cargo::rustc-cfg={name}");
        }
    }
}
