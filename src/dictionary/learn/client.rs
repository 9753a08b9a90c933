//! Who a sample was sent to: the client identity k-anonymity counts, read from the request
//! and kept only as a hash keyed per learner.

use std::hash::{BuildHasher, RandomState};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::request;

/// A client of the service, as the application tells it apart (a user, an account, an
/// address): insert one into a request's extensions and the [`Learner`](super::Learner)
/// counts that request's response as sent to it. Without one it reads a
/// `std::net::SocketAddr` there (the peer's IP address; the port is ignored), or what
/// [`LearnerBuilder::client`](super::LearnerBuilder::client) returns.
///
/// The learner keeps only a hash of it, keyed per learner.
///
/// ```
/// use tower_gzip::dictionary::learn::ClientId;
///
/// let mut req = http::Request::new(());
/// req.extensions_mut().insert(ClientId::new("account-42"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientId(Bytes);

impl ClientId {
    /// A client named by `id` (any bytes that tell clients apart).
    pub fn new(id: impl AsRef<[u8]>) -> Self {
        ClientId(Bytes::copy_from_slice(id.as_ref()))
    }
}

/// The client at this address (an IPv4 address mapped into IPv6 is the IPv4 one).
impl From<IpAddr> for ClientId {
    fn from(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => ClientId(Bytes::copy_from_slice(&v4.octets())),
            IpAddr::V6(v6) => ClientId(Bytes::copy_from_slice(&v6.octets())),
        }
    }
}

/// The client at this address's IP address: ports change from connection to connection.
impl From<SocketAddr> for ClientId {
    fn from(addr: SocketAddr) -> Self {
        addr.ip().into()
    }
}

/// Reads a request's client (see [`LearnerBuilder::client`](super::LearnerBuilder::client)).
pub(crate) type ClientFn = Arc<dyn Fn(&request::Parts) -> Option<ClientId> + Send + Sync>;

/// Turns requests into keyed client hashes.
pub(crate) struct Clients {
    keys: RandomState,
    read: Option<ClientFn>,
}

impl Clients {
    pub(crate) fn new(read: Option<ClientFn>) -> Self {
        Clients {
            keys: RandomState::new(),
            read,
        }
    }

    /// The keyed hash of the request's client: the application's function first, then a
    /// [`ClientId`] or a `SocketAddr` in its extensions; `None` when none says.
    pub(crate) fn key(&self, parts: &request::Parts) -> Option<u64> {
        let id = self
            .read
            .as_ref()
            .and_then(|read| read(parts))
            .or_else(|| parts.extensions.get::<ClientId>().cloned())
            .or_else(|| parts.extensions.get::<SocketAddr>().map(|&a| a.into()))?;
        Some(self.keys.hash_one(&id.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(insert: impl FnOnce(&mut http::Extensions)) -> request::Parts {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        insert(&mut parts.extensions);
        parts
    }

    #[test]
    fn the_ip_counts_not_the_port_and_the_application_comes_first() {
        let clients = Clients::new(None);
        let at = |addr: &str| {
            let addr: SocketAddr = addr.parse().unwrap();
            clients.key(&parts(|e| {
                e.insert(addr);
            }))
        };
        assert_eq!(at("10.0.0.1:1000"), at("10.0.0.1:2000"));
        assert_eq!(at("10.0.0.1:1000"), at("[::ffff:10.0.0.1]:3"));
        assert_ne!(at("10.0.0.1:1000"), at("10.0.0.2:1000"));
        assert_eq!(clients.key(&parts(|_| {})), None);
        let named = clients.key(&parts(|e| {
            e.insert(ClientId::new("a"));
            e.insert("10.0.0.1:1".parse::<SocketAddr>().unwrap());
        }));
        assert_eq!(
            named,
            clients.key(&parts(|e| {
                e.insert(ClientId::new("a"));
            }))
        );
        let read: ClientFn = Arc::new(|p| p.headers.get("x-user").map(ClientId::new));
        let by_header = Clients::new(Some(read));
        let mut p = parts(|e| {
            e.insert(ClientId::new("a"));
        });
        let fallback = by_header.key(&p);
        p.headers.insert("x-user", "u1".parse().unwrap());
        assert_ne!(by_header.key(&p), fallback);
        assert!(by_header.key(&p).is_some());
    }

    #[test]
    fn keys_differ_between_learners() {
        let p = parts(|e| {
            e.insert(ClientId::new("a"));
        });
        // Two random keys give equal hashes with odds of 2^-64.
        assert_ne!(Clients::new(None).key(&p), Clients::new(None).key(&p));
    }
}
