package agentloop_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every ```go block of README.md must appear, line for line (at any
// indentation), in a Go file of this repository, so that the README shows
// code that compiles and runs.
func TestREADME_CodeBlocksAreCompiled(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	sources := repoSources(t)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go blocks")
	}
	for _, b := range blocks {
		snippet := strings.Split(strings.TrimRight(b[1], "\n"), "\n")
		found := false
		for _, src := range sources {
			if containsIndented(strings.Split(src, "\n"), snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("this README block is in no Go file of the repository (keep it in a compiled example and quote it verbatim):\n%s", b[1])
		}
	}
}

// repoSources returns the text of every Go file of the repository (all its
// modules), but for node_modules, nested testdata and hidden folders.
func repoSources(t *testing.T) []string {
	t.Helper()
	var sources []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" && path != "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources = append(sources, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sources
}

// The package doc of aisdk opens with the shortest stateless server and
// the stored one; both must appear, line for line, in a compiled example
// (aisdk's ExampleHandler_stateless, sqlitestore's Example_aisdkHandler).
func TestAisdkDoc_ServersAreCompiled(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("aisdk", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	var cur []string
	for _, line := range append(strings.Split(string(doc), "\n"), "") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, code)
			continue
		}
		if len(cur) > 0 {
			blocks, cur = append(blocks, cur), nil
		}
	}
	if len(blocks) < 2 {
		t.Fatalf("aisdk/doc.go has %d code blocks, want the two servers first", len(blocks))
	}
	sources := repoSources(t)
	for _, b := range blocks[:2] {
		found := false
		for _, src := range sources {
			if containsIndented(strings.Split(src, "\n"), b) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("this block of aisdk/doc.go is in no compiled Go file (keep it in an example and quote it verbatim):\n%s", strings.Join(b, "\n"))
		}
	}
}

// containsIndented reports whether lines holds snippet at some index, every
// non-empty line of it prefixed by the same indentation.
func containsIndented(lines, snippet []string) bool {
	for i := 0; i+len(snippet) <= len(lines); i++ {
		first := lines[i]
		indent, ok := strings.CutSuffix(first, snippet[0])
		if !ok || strings.TrimLeft(indent, "\t ") != "" {
			continue
		}
		match := true
		for j, s := range snippet {
			l := lines[i+j]
			if s == "" {
				match = strings.TrimSpace(l) == ""
			} else {
				match = l == indent+s
			}
			if !match {
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
