//! What a brotli encoder holds on the heap between the events of a server-sent-event
//! stream: a `brotli` encoder fed the demo's `/events` frames (`data: {"tick":N}\n\n`), each
//! followed by a flush, across quality and window. For each setting: the heap live after 3
//! and 50 events (the boxed encoder struct included), the largest blocks by type, and the
//! bytes sent for the 50 events.
//!
//! ```text
//! cargo run --release -p tower-gzip-bench --bin br_idle [qualities] [lgwins]   # e.g. 0,1,2,4 10,18
//! ```

use std::cell::RefCell;
use std::collections::BTreeMap;

use brotli::enc::BrotliAlloc;
use brotli::enc::encode::{
    BrotliEncoderOperation, BrotliEncoderParameter, BrotliEncoderStateStruct,
};
use brotli::{Allocator, SliceWrapper, SliceWrapperMut};

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();

thread_local! {
    /// Live blocks by element type: (count, bytes).
    static BLOCKS: RefCell<BTreeMap<&'static str, (usize, usize)>> = RefCell::default();
}

/// An allocator that keeps no blocks and records what is live, by type.
#[derive(Default)]
struct Tracking;

struct Block<T>(Vec<T>);

impl<T> Default for Block<T> {
    fn default() -> Self {
        Block(Vec::new())
    }
}

impl<T> SliceWrapper<T> for Block<T> {
    fn slice(&self) -> &[T] {
        &self.0
    }
}

impl<T> SliceWrapperMut<T> for Block<T> {
    fn slice_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

fn record<T>(len: usize, sign: isize) {
    let name = std::any::type_name::<T>()
        .rsplit("::")
        .next()
        .unwrap_or("?");
    let bytes = len * size_of::<T>();
    BLOCKS.with(|b| {
        let mut b = b.borrow_mut();
        let e = b.entry(name).or_default();
        e.0 = e.0.wrapping_add_signed(sign);
        e.1 = e.1.wrapping_add_signed(sign * bytes as isize);
    });
}

impl<T: Clone + Default> Allocator<T> for Tracking {
    type AllocatedMemory = Block<T>;

    fn alloc_cell(&mut self, len: usize) -> Block<T> {
        if len > 0 {
            record::<T>(len, 1);
        }
        Block(vec![T::default(); len])
    }

    fn free_cell(&mut self, block: Block<T>) {
        if !block.0.is_empty() {
            record::<T>(block.0.len(), -1);
        }
    }
}

impl BrotliAlloc for Tracking {}

type Core = BrotliEncoderStateStruct<Tracking>;

fn run(core: &mut Core, op: BrotliEncoderOperation, input: &[u8], out: &mut Vec<u8>) {
    let (mut avail_in, mut in_off) = (input.len(), 0);
    loop {
        let (mut avail_out, mut out_off, mut total) = (0, 0, None);
        assert!(core.compress_stream(
            op,
            &mut avail_in,
            input,
            &mut in_off,
            &mut avail_out,
            &mut [],
            &mut out_off,
            &mut total,
            &mut |_, _, _, _| (),
        ));
        loop {
            let mut size = 0;
            let chunk = core.take_output(&mut size);
            let n = size.min(chunk.len());
            if n == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
        if avail_in == 0 && !core.has_more_output() {
            return;
        }
    }
}

fn event(i: usize) -> Vec<u8> {
    format!("data: {{\"tick\":{i}}}\n\n").into_bytes()
}

struct Measured {
    held3: i64,
    held50: i64,
    bytes50: usize,
    plain50: usize,
    blocks: Vec<(&'static str, (usize, usize))>,
}

fn measure(quality: u32, lgwin: u32) -> Measured {
    BLOCKS.with(|b| b.borrow_mut().clear());
    let before = alloc::this_thread().live;
    let mut core = Box::new(Core::new(Tracking));
    core.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_QUALITY, quality);
    core.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_LGWIN, lgwin);
    let mut out = Vec::with_capacity(64 * 1024);
    let mut plain = 0;
    let mut held3 = 0;
    let mut blocks = Vec::new();
    for i in 0..50 {
        let e = event(i);
        plain += e.len();
        run(
            &mut core,
            BrotliEncoderOperation::BROTLI_OPERATION_PROCESS,
            &e,
            &mut out,
        );
        run(
            &mut core,
            BrotliEncoderOperation::BROTLI_OPERATION_FLUSH,
            &[],
            &mut out,
        );
        if i == 2 {
            held3 = alloc::this_thread().live - before - out.capacity() as i64;
            blocks = BLOCKS.with(|b| {
                let mut v: Vec<_> = b.borrow().iter().map(|(k, v)| (*k, *v)).collect();
                v.retain(|(_, (n, _))| *n > 0);
                v.sort_by_key(|b| std::cmp::Reverse(b.1.1));
                v
            });
        }
    }
    let held50 = alloc::this_thread().live - before - out.capacity() as i64;
    Measured {
        held3,
        held50,
        bytes50: out.len(),
        plain50: plain,
        blocks,
    }
}

fn list(arg: Option<String>, default: &[u32]) -> Vec<u32> {
    arg.map_or_else(
        || default.to_vec(),
        |s| s.split(',').map(|v| v.parse().expect("a number")).collect(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let qualities = list(args.next(), &[0, 1, 2, 3, 4, 5]);
    let lgwins = list(args.next(), &[10, 12, 14, 16, 18]);
    println!(
        "| quality | lgwin | held after 3 events | after 50 | bytes for 50 events (plain) | largest blocks after 3 |"
    );
    println!("|---|---|---|---|---|---|");
    for &q in &qualities {
        for &w in &lgwins {
            let m = measure(q, w);
            let blocks: Vec<String> = m
                .blocks
                .iter()
                .take(4)
                .map(|(name, (n, bytes))| format!("{name} {n}x {bytes}"))
                .collect();
            println!(
                "| {q} | {w} | {} | {} | {} ({}) | {} |",
                m.held3,
                m.held50,
                m.bytes50,
                m.plain50,
                blocks.join(", ")
            );
        }
    }
}
