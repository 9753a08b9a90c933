//! The dictionary builder on the API-JSON corpus.

mod corpus;
