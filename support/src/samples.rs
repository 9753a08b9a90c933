//! API-like JSON for the crate's dictionary unit tests and the measuring programs in
//! `bench/src/bin/`, so both see the same bytes.

/// `n` API-like JSON records of varied content, deterministic per `seed`.
pub fn json_samples(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    const NAMES: &[&str] = &[
        "Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances",
    ];
    const CITIES: &[&str] = &[
        "Paris", "Lagos", "Osaka", "Lima", "Oslo", "Pune", "Quito", "Accra",
    ];
    const TAGS: &[&str] = &[
        "admin", "beta", "staff", "trial", "verified", "legacy", "api", "mobile",
    ];
    (0..n)
        .map(|_| {
            let items = 1 + next() % 10;
            let mut s = String::from("{\"data\":[");
            for i in 0..items {
                if i > 0 {
                    s.push(',');
                }
                let name = NAMES[(next() % 8) as usize];
                let city = CITIES[(next() % 8) as usize];
                let tags: Vec<String> = (0..next() % 4)
                    .map(|_| format!("\"{}\"", TAGS[(next() % 8) as usize]))
                    .collect();
                s.push_str(&format!(
                    "{{\"id\":{},\"name\":\"{} {:x}\",\"email\":\"{}.{}@example.com\",\"address\":{{\"city\":\"{}\",\"zip\":\"{:05}\"}},\"active\":{},\"score\":{}.{:02},\"tags\":[{}],\"created_at\":\"2026-{:02}-{:02}T{:02}:{:02}:00Z\"}}",
                    next() % 1_000_000,
                    name,
                    next() % 0xffff,
                    name.to_lowercase(),
                    next() % 1000,
                    city,
                    next() % 100_000,
                    next() % 2 == 0,
                    next() % 100,
                    next() % 100,
                    tags.join(","),
                    1 + next() % 12,
                    1 + next() % 28,
                    next() % 24,
                    next() % 60,
                ));
            }
            s.push_str(&format!("],\"page\":{},\"total\":{}}}", next() % 50, next() % 5000));
            s.into_bytes()
        })
        .collect()
}

/// zstd's dictionary trainer alone (`ZDICT_trainFromBuffer`): at most `max_size` bytes
/// trained on `samples`, for the programs that measure dictionaries of a given size (the
/// crate's `DictionaryBuilder` chooses sizes itself).
#[cfg(feature = "zstd")]
pub fn train<S: AsRef<[u8]>>(samples: &[S], max_size: usize) -> Result<bytes::Bytes, String> {
    let sizes: Vec<usize> = samples.iter().map(|s| s.as_ref().len()).collect();
    let buffer: Vec<u8> = samples
        .iter()
        .flat_map(|s| s.as_ref().iter().copied())
        .collect();
    let mut dictionary = Vec::with_capacity(max_size);
    zstd_safe::train_from_buffer(&mut dictionary, &buffer, &sizes)
        .map_err(|code| zstd_safe::get_error_name(code).to_owned())?;
    Ok(bytes::Bytes::from(dictionary))
}
