//! The demo's list-valued flags: `--level` and `--prefer`.

use tower_gzip::ContentCoding;

/// `--level`'s list: `br=9,zstd=12`, each coding's level (clamped to its range).
pub fn parse_levels(list: &str) -> Result<Vec<(ContentCoding, i32)>, String> {
    let mut levels = Vec::new();
    for item in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (token, level) = item
            .split_once('=')
            .ok_or_else(|| format!("--level: {item:?} is not CODING=N"))?;
        let coding = ContentCoding::from_token(token)
            .ok_or_else(|| format!("--level: unknown or not compiled-in coding {token:?}"))?;
        let level = level
            .trim()
            .parse()
            .map_err(|_| format!("--level: {level:?} is not a number"))?;
        levels.push((coding, level));
    }
    if levels.is_empty() {
        return Err("--level: an empty list".into());
    }
    Ok(levels)
}

/// `--prefer`'s list: the plain codings and the dictionary codings, each in order.
pub fn parse_prefer(list: &str) -> Result<(Vec<ContentCoding>, Vec<ContentCoding>), String> {
    let (mut plain, mut dict) = (Vec::new(), Vec::new());
    for token in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let coding = ContentCoding::from_token(token)
            .ok_or_else(|| format!("--prefer: unknown or not compiled-in coding {token:?}"))?;
        let list = if coding.needs_dictionary() {
            &mut dict
        } else {
            &mut plain
        };
        if !list.contains(&coding) {
            list.push(coding);
        }
    }
    if plain.is_empty() && dict.is_empty() {
        return Err("--prefer: an empty list".into());
    }
    Ok((plain, dict))
}
