use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use std::convert::Infallible;
use tower::{Layer, ServiceExt, service_fn};
fn chunks(b: &Bytes, n: usize) -> tower_gzip_support::bodies::StutterBody {
    tower_gzip_support::bodies::StutterBody::data(
        b.chunks(n).map(Bytes::copy_from_slice).collect::<Vec<_>>(),
    )
}
#[tokio::test]
async fn streamed() {
    let t = std::fs::read("docs/design.md").unwrap();
    let body = Bytes::from(t.repeat(4));
    for coding in ["zstd", "br", "gzip"] {
        for n in [4096usize, 16384, 65536] {
            let b = body.clone();
            let ours = tower_gzip::compression::CompressionLayer::new().layer(service_fn(
                move |_: Request<()>| {
                    let c = chunks(&b, n);
                    async move { Ok::<_, Infallible>(Response::new(c)) }
                },
            ));
            let res = ours
                .oneshot(
                    Request::get("/")
                        .header("accept-encoding", coding)
                        .body(())
                        .unwrap(),
                )
                .await
                .unwrap();
            let ob = res.into_body().collect().await.unwrap().to_bytes();
            let o = ob.len();
            std::fs::write(format!("/tmp/scratch/ours-{coding}-{n}"), &ob).unwrap();
            let b = body.clone();
            let th = tower_http::compression::CompressionLayer::new().layer(service_fn(
                move |_: Request<()>| {
                    let c = chunks(&b, n);
                    async move { Ok::<_, Infallible>(Response::new(c)) }
                },
            ));
            let res = th
                .oneshot(
                    Request::get("/")
                        .header("accept-encoding", coding)
                        .body(())
                        .unwrap(),
                )
                .await
                .unwrap();
            let t = res.into_body().collect().await.unwrap().to_bytes().len();
            eprintln!(
                "{coding} chunk {n}: body {} ours {o} tower-http {t} ratio {:.3}",
                body.len(),
                o as f64 / t as f64
            );
        }
    }
}
