package ctxwindow

// LoadSummary and SaveSummary read and write a conversation's summary
// document, for the tests.
var (
	LoadSummary = loadSummary
	SaveSummary = saveSummary
)
