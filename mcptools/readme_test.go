package mcptools_test

import (
	"os"
	"strings"
	"testing"
)

// The README's MCP snippet is the body of ExampleTools between its
// "README begin" and "README end" lines, so that it compiles.
func TestREADMEQuotesExampleTools(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "\t// README begin\n")
	if !ok {
		t.Fatal("example_test.go has no README begin line")
	}
	body, _, ok := strings.Cut(rest, "\t// README end\n")
	if !ok {
		t.Fatal("example_test.go has no README end line")
	}
	var snippet strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		snippet.WriteString(strings.TrimPrefix(line, "\t"))
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+snippet.String()+"```\n") {
		t.Errorf("README.md does not quote ExampleTools verbatim; it should hold:\n```go\n%s```", snippet.String())
	}
}
