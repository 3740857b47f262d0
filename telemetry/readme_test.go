package telemetry_test

import (
	"os"
	"strings"
	"testing"
)

// The README's observability snippet is ExampleNewHooks, quoted verbatim.
func TestREADMEQuotesExampleNewHooks(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	start := strings.Index(body, "\thooks, err := telemetry.NewHooks(telemetry.Options{})")
	end := strings.Index(body, "\tfmt.Println(answer)\n\t// Output:\n\t// Hello!")
	if start < 0 || end < start {
		t.Fatal("ExampleNewHooks does not have the shape this test expects")
	}
	var snippet strings.Builder
	for _, line := range strings.SplitAfter(body[start:end], "\n") {
		snippet.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if !strings.Contains(string(readme), "```go\n"+snippet.String()+"```\n") {
		t.Errorf("README.md does not quote ExampleNewHooks; its snippet should be:\n%s", snippet.String())
	}
}
