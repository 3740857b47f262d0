// Package loadtest holds aisdk's load benchmarks on the SQLite and
// PostgreSQL stores: two replicas of the handler sharing one database. It is
// a module of its own so that aisdk's users do not download the database
// drivers; run it with go test -bench . in this directory.
package loadtest
