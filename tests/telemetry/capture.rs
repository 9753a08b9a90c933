//! A `tracing` subscriber for one test thread that keeps one target's events (the
//! compression layer's, or the WebSocket module's) with their fields as values.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::subscriber::DefaultGuard;
use tracing::{Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// A field's value as recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    U64(u64),
    I64(i64),
    Bool(bool),
    /// Recorded through `Debug` (the message, `%error`).
    Text(String),
}

/// One event of the layer's target.
#[derive(Clone, Debug)]
pub struct Event {
    pub level: Level,
    pub fields: BTreeMap<String, Value>,
}

impl Event {
    pub fn message(&self) -> &str {
        match self.fields.get("message") {
            Some(Value::Text(m)) => m,
            other => panic!("no message: {other:?}"),
        }
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        match self.fields.get(name)? {
            Value::Str(s) | Value::Text(s) => Some(s),
            other => panic!("{name}: not text: {other:?}"),
        }
    }

    pub fn u64(&self, name: &str) -> Option<u64> {
        match self.fields.get(name)? {
            Value::U64(n) => Some(*n),
            Value::I64(n) => Some(u64::try_from(*n).unwrap()),
            other => panic!("{name}: not a number: {other:?}"),
        }
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.fields.get(name)? {
            Value::Bool(b) => Some(*b),
            other => panic!("{name}: not a bool: {other:?}"),
        }
    }
}

/// The events captured so far.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<Event>>>);

impl Captured {
    /// The events since the last call.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// The one event since the last call, with `message`.
    pub fn one(&self, message: &str) -> Event {
        let events = self.take();
        let mut found = events.iter().filter(|e| e.message() == message);
        let event = found
            .next()
            .unwrap_or_else(|| panic!("no {message:?} event in {events:#?}"))
            .clone();
        assert!(found.next().is_none(), "several {message:?}: {events:#?}");
        event
    }
}

struct Capture(Captured, &'static str);

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != self.1 {
            return;
        }
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        self.0.0.lock().unwrap().push(Event {
            level: *event.metadata().level(),
            fields: fields.0,
        });
    }
}

struct Fields(BTreeMap<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), Value::Str(value.into()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), Value::U64(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), Value::I64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), Value::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = format!("{value:?}");
        self.0.insert(field.name().into(), Value::Text(text));
    }
}

/// Captures the compression layer's events on this thread (a current-thread runtime's tasks
/// included) until the guard drops.
pub fn capture() -> (Captured, DefaultGuard) {
    capture_target("tower_gzip::compression")
}

/// Captures `target`'s events on this thread until the guard drops.
pub fn capture_target(target: &'static str) -> (Captured, DefaultGuard) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(Capture(captured.clone(), target));
    (captured, tracing::subscriber::set_default(subscriber))
}
