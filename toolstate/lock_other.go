//go:build !unix

package toolstate

// lockFile does nothing where flock(2) is missing: there, FileStore
// coordinates the writers of one process only.
func lockFile(string) (func(), error) { return func() {}, nil }
