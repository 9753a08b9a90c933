//! The one loopback-server harness: an axum `Router` served on `127.0.0.1:<free port>` by
//! hyper-util's auto builder (HTTP/1.1 and h2c), a hyper-util client for it, and a request
//! helper that collects the whole reply under a timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http::Request;
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;

use crate::{BoxError, Collected, collect};

/// How long a request, or the collection of its body, may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Socket and connection settings; the defaults are the operating system's and hyper's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tuning {
    /// `SO_SNDBUF` and `SO_RCVBUF` of the listener, which accepted sockets inherit.
    pub socket_buffer: Option<u32>,
    /// hyper's HTTP/1 write buffer limit (`max_buf_size`), which bounds the response body
    /// queued per connection.
    pub max_buf_size: Option<usize>,
}

/// A running server. Dropping it (or [`Loopback::shutdown`]) stops accepting and shuts
/// every open connection down gracefully.
pub struct Loopback {
    /// The address it listens on.
    pub addr: SocketAddr,
    open: Arc<AtomicU64>,
    stop: watch::Sender<bool>,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl Loopback {
    /// Serves `app` with the default settings.
    pub async fn serve(app: Router) -> Loopback {
        Loopback::serve_with(app, Tuning::default()).await
    }

    /// Serves `app` with `tuning`.
    pub async fn serve_with(app: Router, tuning: Tuning) -> Loopback {
        let socket = TcpSocket::new_v4().unwrap();
        if let Some(size) = tuning.socket_buffer {
            socket.set_send_buffer_size(size).unwrap();
            socket.set_recv_buffer_size(size).unwrap();
        }
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener: TcpListener = socket.listen(1024).unwrap();
        let addr = listener.local_addr().unwrap();
        let open = Arc::new(AtomicU64::new(0));
        let (stop, mut stopped) = watch::channel(false);
        let mut builder = auto::Builder::new(TokioExecutor::new());
        if let Some(size) = tuning.max_buf_size {
            builder.http1().max_buf_size(size);
        }
        let count = open.clone();
        let done = tokio::spawn(async move {
            let graceful = GracefulShutdown::new();
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => break,
                    },
                    _ = stopped.changed() => break,
                };
                let service = TowerToHyperService::new(app.clone());
                let connection = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .into_owned();
                let connection = graceful.watch(connection);
                let closed = Closed::open(count.clone());
                tokio::spawn(async move {
                    let _closed = closed;
                    let _ = connection.await;
                });
            }
            // Open connections finish their requests in flight, then close.
            let _ = tokio::time::timeout(TIMEOUT, graceful.shutdown()).await;
        });
        Loopback {
            addr,
            open,
            stop,
            done: Some(done),
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted and not yet closed.
    pub fn open_connections(&self) -> u64 {
        self.open.load(Ordering::SeqCst)
    }

    /// Stops accepting and waits until every connection has closed.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(done) = self.done.take() {
            done.await.unwrap();
        }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Counts a connection as open until dropped: also when its task unwinds from a panicking
/// body.
struct Closed(Arc<AtomicU64>);

impl Closed {
    fn open(count: Arc<AtomicU64>) -> Closed {
        count.fetch_add(1, Ordering::SeqCst);
        Closed(count)
    }
}

impl Drop for Closed {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The client of every loopback test: hyper-util's, any body, boxed.
pub type TestClient = Client<HttpConnector, BoxBody<Bytes, BoxError>>;

/// An HTTP/1.1 client.
pub fn http1_client() -> TestClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// An HTTP/2 client with prior knowledge (h2c).
pub fn http2_client() -> TestClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// `body` boxed for a [`TestClient`].
pub fn boxed<B>(body: B) -> BoxBody<Bytes, BoxError>
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    body.map_err(Into::into).boxed()
}

/// An empty request body.
pub fn no_body() -> BoxBody<Bytes, BoxError> {
    boxed(Empty::new())
}

/// Sends `request` and collects the whole reply, each step under [`TIMEOUT`].
pub async fn send<B>(client: &TestClient, request: Request<B>) -> Collected
where
    B: Body<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    let response = tokio::time::timeout(TIMEOUT, client.request(request.map(boxed)))
        .await
        .expect("response in time")
        .expect("a response");
    tokio::time::timeout(TIMEOUT, collect(response))
        .await
        .expect("body in time")
}
