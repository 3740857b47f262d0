// Package providertest is the test kit of the providers, as
// net/http/httptest is for HTTP handlers: a scripted HTTP server that
// answers with bodies in turn and records what it was sent, the framing of
// recorded fixtures as server-sent events, a collector of a stream's
// chunks, and conformance tests that every HTTP provider runs with its own
// constructor (errors and cancellation in [Errors], files it cannot take in
// [RejectsFiles], files it sends in [SendsFiles], decoder output in
// [FuzzDecoder], parsing from memory in [BenchmarkStream]).
//
// It is internal: only the providers' tests use it. A provider's own
// behaviour (its wire format, its error bodies) stays tested in its own
// package.
package providertest
