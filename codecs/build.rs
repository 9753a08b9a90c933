//! Names for feature combinations, so the sources say `cfg(dictionary)` instead of
//! `cfg(any(feature = "dcz", feature = "dcb"))`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dictionary)");
    println!("cargo::rustc-check-cfg=cfg(dictionary_client)");
    println!("cargo::rustc-check-cfg=cfg(both_dictionary_codings)");
    let on = |feature: &str| std::env::var_os(format!("CARGO_FEATURE_{feature}")).is_some();
    // Dictionary transport: the store, the gate, serving, with either dictionary coding.
    // Both dictionary codings: what the tests that compare them need.
    if on("DCZ") && on("DCB") {
        println!("cargo::rustc-cfg=both_dictionary_codings");
    }
    if on("DCZ") || on("DCB") {
        println!("cargo::rustc-cfg=dictionary");
        // The client's dictionary store (URL patterns, freshness).
        if on("DICTIONARY_CLIENT") {
            println!("cargo::rustc-cfg=dictionary_client");
        }
    }
}
