package pgstore

// For the tests of package pgstore_test.
var (
	TestServer      = server
	TestFreshSchema = freshSchema
)
