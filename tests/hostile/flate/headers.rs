//! Hostile headers over the same server: gzip header fields without end, coding chains
//! (`Content-Encoding` lists), and huge `Accept-Encoding` values.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_header_fields_are_bounded() {
    let server = start().await;
    let plain = text(2_000);

    // Each field at a large size, alone or together, is valid: FEXTRA at its maximum length
    // (65,535), FNAME up to 64 KiB (NUL included).
    let extra = vec![0xa5u8; 65_535];
    let long_name = vec![b'n'; 60_000];
    let longest_name = vec![b'n'; 64 * 1024 - 1];
    for (case, header) in [
        (
            "FEXTRA 65,535",
            GzipHeader {
                extra: Some(&extra),
                ..GzipHeader::default()
            },
        ),
        (
            "FEXTRA, FNAME and FHCRC together",
            GzipHeader {
                extra: Some(&extra),
                name: Some(&long_name),
                hcrc: true,
                ..GzipHeader::default()
            },
        ),
        (
            "FNAME 64 KiB with its NUL",
            GzipHeader {
                name: Some(&longest_name),
                ..GzipHeader::default()
            },
        ),
    ] {
        let reply = server.upload("gzip", gzip_member(&header, &plain)).await;
        assert_eq!(reply.status, StatusCode::OK, "{case}");
        assert!(reply.body == plain, "{case}");
        server.still_good(case).await;
    }
    // One byte more is refused.
    let name = vec![b'n'; 64 * 1024];
    server
        .expect(
            "FNAME 64 KiB + NUL",
            "gzip",
            gzip_member(&GzipHeader::named(&name), &plain),
            StatusCode::BAD_REQUEST,
        )
        .await;
    // And the same for a comment.
    let mut wire = vec![0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 255];
    wire.extend(std::iter::repeat_n(b'c', 100_000));
    wire.push(0);
    server
        .expect("FCOMMENT 100,000", "gzip", wire, StatusCode::BAD_REQUEST)
        .await;

    // A name that never ends, streamed: refused once past the bound, long before its end.
    let endless = Endless::new(
        vec![0x1f, 0x8b, 8, FNAME, 0, 0, 0, 0, 0, 255],
        b'n',
        8 << 20,
    );
    let pulled = endless.pulled.clone();
    let status = server.raw_post("gzip", endless).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    eprintln!(
        "endless FNAME: 400 after the client generated {} of 8 MiB",
        pulled.load(Ordering::SeqCst)
    );
    server.still_good("endless FNAME").await;
    server.pool_is_healthy().await;
}

/// `head`, then `fill` bytes up to `total`, in 64 KiB chunks, generated on demand.
struct Endless {
    head: Option<Vec<u8>>,
    fill: u8,
    left: u64,
    pulled: Arc<AtomicU64>,
}

impl Endless {
    fn new(head: Vec<u8>, fill: u8, total: u64) -> Self {
        Endless {
            head: Some(head),
            fill,
            left: total,
            pulled: Arc::default(),
        }
    }
}

impl Iterator for Endless {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let chunk = match self.head.take() {
            Some(head) => head,
            None if self.left == 0 => return None,
            None => {
                let n = self.left.min(64 * 1024);
                self.left -= n;
                vec![self.fill; n as usize]
            }
        };
        self.pulled.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        Some(chunk)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coding_chains() {
    let server = start().await;
    let plain = text(10_000);

    for (coding, wire) in [
        ("gzip, gzip", gzip(&gzip(&plain))),
        ("gzip,gzip", gzip(&gzip(&plain))),
        ("deflate, gzip", gzip(&zlib(&plain))),
        ("gzip, deflate, gzip", gzip(&zlib(&gzip(&plain)))),
        ("identity, gzip, identity", gzip(&plain)),
    ] {
        let reply = server.upload(coding, wire).await;
        assert_eq!(reply.status, StatusCode::OK, "{coding}");
        assert!(reply.body == plain, "{coding}");
    }
    server.still_good("valid chains").await;

    // Four codings, a thousand, and an unknown one: 415 before the body is read.
    let four = gzip(&gzip(&gzip(&gzip(&plain))));
    server
        .expect(
            "4 codings",
            "gzip, gzip, gzip, gzip",
            four,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    let thousand = vec!["gzip"; 1000].join(", ");
    server
        .expect(
            "1000 codings",
            &thousand,
            gzip(&plain),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    let mut huge = "gzip,".repeat(13_000);
    huge.push_str("gzip");
    server
        .expect(
            "64 KiB of codings",
            &huge,
            gzip(&plain),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        )
        .await;
    // Registered codings no build decodes (br and zstd, here before, are decoded with their
    // cargo features), and a parameter, which Content-Encoding does not take.
    for coding in [
        "exi",
        "gzip, pack200-gzip",
        "aes128gcm, gzip",
        "compress",
        "gzip;q=1",
    ] {
        server
            .expect(
                coding,
                coding,
                gzip(&plain),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
            )
            .await;
    }
    // Content-Encoding bytes that are not visible ASCII.
    let reply = server
        .send(
            Method::POST,
            "/echo",
            &[("content-encoding", b"gzip\x80")],
            Full::new(Bytes::from(gzip(&plain))),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let every_coding: Vec<&str> = ContentCoding::PLAIN.iter().map(|f| f.as_str()).collect();
    assert_eq!(
        reply.headers[ACCEPT_ENCODING],
        every_coding.join(", ").as_str()
    );
    server.still_good("Content-Encoding with obs-text").await;

    // A chain whose layers are each fine but the inner one is corrupt: 400.
    let mut inner = gzip(&plain);
    let at = inner.len() - 6;
    inner[at] ^= 0xff;
    server
        .expect(
            "corrupt inner coding",
            "gzip, gzip",
            gzip(&inner),
            StatusCode::BAD_REQUEST,
        )
        .await;
    server.pool_is_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_accept_encoding_headers() {
    let server = start().await;
    let kib64 = 64 * 1024;

    // (value, expected Content-Encoding, or None for identity, or 406)
    let filler = |entry: &str, len: usize| entry.repeat(len / entry.len());
    let cases: Vec<(String, Option<&str>)> = vec![
        // 64 KiB of codings we do not offer, then gzip at a low weight: gzip.
        (
            filler("x-unknown;q=0.5, ", kib64) + "gzip;q=0.001",
            Some("gzip"),
        ),
        // Thousands of entries of a coding we do not offer, deflate last (`exi`: br, used
        // here before, is offered with its cargo feature).
        (filler("exi, ", kib64) + "deflate", Some("deflate")),
        // Thousands of gzip entries, refused every time; deflate once at 0.001.
        (
            filler("gzip;q=0, ", kib64) + "deflate;q=0.001",
            Some("deflate"),
        ),
        // Thousands of duplicates: the most permissive weight wins.
        (
            filler("gzip;q=0.1, deflate;q=0.2, ", kib64) + "gzip;q=0.3",
            Some("gzip"),
        ),
        // One 64 KiB token: not a coding we know, so identity.
        ("g".repeat(kib64), None),
        // An unterminated quoted parameter swallows the rest of the value.
        (
            format!("gzip;ext=\"{}, deflate", "a,".repeat(kib64 / 2)),
            Some("gzip"),
        ),
        // 64 KiB of invalid weights: every entry dropped, identity.
        (filler("gzip;q=2, deflate;q=-1, ", kib64), None),
        // Thousands of empty elements.
        (",".repeat(kib64) + "gzip", Some("gzip")),
        // 64 KiB of whitespace and separators.
        (" ; ,\t".repeat(kib64 / 5), None),
    ];
    for (value, expected) in &cases {
        let reply = server.get_page(value.as_bytes()).await;
        assert_eq!(reply.status, StatusCode::OK, "{}...", &value[..40]);
        assert_eq!(
            reply
                .headers
                .get(CONTENT_ENCODING)
                .map(|v| v.to_str().unwrap()),
            *expected,
            "{}...",
            &value[..40]
        );
        server.still_good("huge Accept-Encoding").await;
    }

    // Identity refused at the end of 64 KiB of unknown codings: 406.
    let value = filler("exi;q=1, ", kib64) + "*;q=0";
    let reply = server.get_page(value.as_bytes()).await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
    server.still_good("406").await;

    // Several header lines of 16 KiB each (of a coding we do not offer: zstd, used here
    // before, is offered with its cargo feature).
    let line = filler("exi;q=0.9, ", 16 * 1024);
    let mut headers: Vec<(&str, &[u8])> = vec![("accept-encoding", line.as_bytes()); 6];
    headers.push(("accept-encoding", b"deflate;q=0.4, gzip;q=0.5"));
    let reply = server
        .send(Method::GET, "/page", &headers, Full::new(Bytes::new()))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.headers[CONTENT_ENCODING], "gzip");
    assert!(decode(Some("gzip"), &reply.body) == page());
    server.still_good("many Accept-Encoding lines").await;
    server.pool_is_healthy().await;
}
