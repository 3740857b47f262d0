package agentloop_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulePath is the import path of the repository's root package.
const modulePath = "github.com/agentloop/agentloop"

// designDoc is the design document that tests cite by section.
const designDoc = "design/design.md"

var (
	// A numbered heading of a document in design/: "## 5. Tools" or
	// "### 5.3 Execution…".
	docHeading = regexp.MustCompile(`^#{2,6} (\d+(?:\.\d+)*)\.?\s`)
	// A reference to a section of a document: "design.md §5.3".
	docRef = regexp.MustCompile(`([A-Za-z0-9_.-]+\.md) §(\d+(?:\.\d+)*)`)
	// A reference inside the design document itself: "§5.3".
	sectionRef = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)
)

// repoFiles returns the paths, relative to the repository root (this
// package's directory), of the files whose names end with ext, leaving out
// hidden directories, testdata and node_modules, as the go command does.
func repoFiles(t *testing.T, ext string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ext) {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// docSections returns the section numbers of the numbered headings of the
// document at path.
func docSections(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sections := make(map[string]bool)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := docHeading.FindStringSubmatch(sc.Text()); m != nil {
			sections[m[1]] = true
		}
	}
	require.NoError(t, sc.Err())
	return sections
}

// Every "NAME.md §N" in the repository's Go files and in the documents of
// design/ names a document of design/ and a section it has, and every "§N"
// inside the design document names one of its own sections: a renumbered
// section cannot leave a test pointing at nothing, nor can a test cite a
// document the repository does not hold.
func TestDesignReferences_NameSectionsThatExist(t *testing.T) {
	docs := make(map[string]map[string]bool) // by file name
	for _, path := range repoFiles(t, ".md") {
		if strings.HasPrefix(path, "design/") {
			docs[filepath.Base(path)] = docSections(t, path)
		}
	}
	require.NotEmpty(t, docs[filepath.Base(designDoc)], "%s is missing or has no numbered headings", designDoc)

	cited := make(map[string]int) // references per document
	check := func(path string, re *regexp.Regexp, doc string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				name, section := doc, m[len(m)-1]
				if name == "" {
					name = m[1]
				}
				cited[name]++
				sections, ok := docs[name]
				switch {
				case !ok:
					t.Errorf("%s:%d cites %s §%s, but design/ holds no %s", path, i+1, name, section, name)
				case !sections[section]:
					t.Errorf("%s:%d cites %s §%s, which has no such section", path, i+1, name, section)
				}
			}
		}
	}
	for _, path := range repoFiles(t, ".go") {
		check(path, docRef, "")
	}
	for _, path := range repoFiles(t, ".md") {
		switch {
		case path == designDoc:
			check(path, sectionRef, filepath.Base(designDoc))
			check(path, docRef, "")
		case strings.HasPrefix(path, "design/"):
			check(path, docRef, "")
		}
	}
	// The loop's rule tests cite their sections; finding few means this
	// check is looking in the wrong place.
	require.GreaterOrEqual(t, cited[filepath.Base(designDoc)], 30, "references to %s", designDoc)
}

// design.md §2.2: the root imports no package of this repository,
// providers never import aisdk, aisdk imports neither providers nor
// toolstate, and nothing but the examples imports the examples. Test files
// are left out: a package's tests may use what its users would.
func TestDependencies_PointOneWay(t *testing.T) {
	under := func(imp, dir string) bool {
		p := modulePath + "/" + dir
		return imp == p || strings.HasPrefix(imp, p+"/")
	}
	within := func(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	fset := token.NewFileSet()
	checked := 0
	for _, path := range repoFiles(t, ".go") {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		require.NoError(t, err)
		rel := filepath.ToSlash(filepath.Dir(path))
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			checked++
			var broken string
			switch {
			case rel == "." && (imp == modulePath || strings.HasPrefix(imp, modulePath+"/")):
				broken = "the root package imports no package of this repository"
			case within(rel, "providers") && under(imp, "aisdk"):
				broken = "providers never import aisdk"
			case within(rel, "aisdk") && (under(imp, "providers") || under(imp, "toolstate")):
				broken = "aisdk imports neither providers nor toolstate"
			case !within(rel, "examples") && under(imp, "examples"):
				broken = "nothing but the examples imports the examples"
			}
			if broken != "" {
				t.Errorf("%s imports %s, but %s (design.md §2.2)", path, imp, broken)
			}
		}
	}
	require.NotZero(t, checked, "no imports found: the walk missed the repository")
}
