//! Arbitrary gRPC request bodies (raw, or messages framed, gzip-compressed, corrupted or cut
//! short) in arbitrary chunks through `GrpcCompressionLayer`, echoed back compressed.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tower_gzip_fuzz::grpc::check_framing(data));
