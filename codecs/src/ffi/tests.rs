//! The spare-capacity writers: every byte they expose is one the codec wrote, at most the
//! room given, after what `out` already held.

use bytes::BytesMut;
use flate2::{Compress, Compression, Decompress, FlushCompress, Status};

use super::{compress_into, decompress_into};

fn sample() -> Vec<u8> {
    (0..20_000u32)
        .flat_map(|i| format!("{} {} ", i % 97, i * 7919 % 1013).into_bytes())
        .collect()
}

#[test]
fn flate_writes_after_what_out_holds_and_within_the_room() {
    let input = sample();
    for room in [1, 7, 512, 64 * 1024] {
        let mut deflate = Compress::new(Compression::new(6), false);
        let mut packed = BytesMut::from(&b"prefix"[..]);
        let mut pos = 0;
        loop {
            let before = packed.len();
            let step = compress_into(
                &mut deflate,
                &input[pos..],
                &mut packed,
                room,
                FlushCompress::Finish,
            );
            assert!(step.produced <= room, "room {room}");
            assert_eq!(packed.len(), before + step.produced);
            pos += step.consumed;
            if step.status.unwrap() == Status::StreamEnd {
                break;
            }
        }
        assert_eq!(&packed[..6], b"prefix");

        let mut inflate = Decompress::new(false);
        let mut unpacked = BytesMut::from(&b"head"[..]);
        let mut rest = &packed[6..];
        loop {
            let before = unpacked.len();
            let step = decompress_into(&mut inflate, rest, &mut unpacked, room);
            assert!(step.produced <= room);
            assert_eq!(unpacked.len(), before + step.produced);
            rest = &rest[step.consumed..];
            if step.status.unwrap() == Status::StreamEnd {
                break;
            }
        }
        assert_eq!(&unpacked[..4], b"head");
        assert_eq!(&unpacked[4..], &input[..], "room {room}");
    }
}

#[test]
fn flate_room_zero_writes_nothing() {
    let mut inflate = Decompress::new(false);
    let mut out = BytesMut::new();
    let step = decompress_into(&mut inflate, &[0x4b, 0x04, 0x00], &mut out, 0);
    assert_eq!((step.produced, out.len()), (0, 0));
}

#[cfg(feature = "zstd")]
mod zstd {
    use bytes::BytesMut;
    use zstd_safe::zstd_sys::ZSTD_ErrorCode;
    use zstd_safe::{CCtx, DCtx, InBuffer, OutBuffer};

    use crate::ffi::{Spare, error_code};

    #[test]
    fn spare_grows_out_by_what_zstd_wrote_within_the_room() {
        let input = super::sample();
        let mut cctx = CCtx::create();
        let mut packed = BytesMut::from(&b"prefix"[..]);
        let mut src = InBuffer::around(&input);
        loop {
            let before = packed.len();
            let left = {
                let mut spare = Spare::new(&mut packed, 3);
                let start = spare.start();
                let mut buffer = OutBuffer::around_pos(&mut spare, start);
                cctx.compress_stream2(
                    &mut buffer,
                    &mut src,
                    zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
                )
                .unwrap()
            };
            assert!(packed.len() - before <= 3);
            if left == 0 {
                break;
            }
        }
        assert_eq!(&packed[..6], b"prefix");

        let mut dctx = DCtx::create();
        let mut unpacked = BytesMut::new();
        let mut src = InBuffer::around(&packed[6..]);
        while unpacked.len() < input.len() {
            let before = unpacked.len();
            {
                let mut spare = Spare::new(&mut unpacked, 1000);
                let start = spare.start();
                let mut buffer = OutBuffer::around_pos(&mut spare, start);
                dctx.decompress_stream(&mut buffer, &mut src).unwrap();
            }
            assert!(unpacked.len() - before <= 1000);
        }
        assert_eq!(&unpacked[..], &input[..]);
    }

    #[test]
    fn error_codes_read_as_their_kind() {
        let mut dctx = DCtx::create();
        let mut out = BytesMut::new();
        let mut spare = Spare::new(&mut out, 64);
        let start = spare.start();
        let mut buffer = OutBuffer::around_pos(&mut spare, start);
        let code = dctx
            .decompress_stream(&mut buffer, &mut InBuffer::around(b"not zstd at all"))
            .unwrap_err();
        assert_eq!(error_code(code), ZSTD_ErrorCode::ZSTD_error_prefix_unknown);
        assert_eq!(error_code(0), ZSTD_ErrorCode::ZSTD_error_no_error);
    }
}
