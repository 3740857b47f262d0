package storetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The suite's exported API takes the standard library's testing types and
// exposes no third-party types (testify, go-cmp: used inside, never in a
// signature), so a backend's tests need nothing but the standard library and
// the store package to run it.
func TestExportedAPINamesOnlyTheStandardLibraryAndStore(t *testing.T) {
	allowed := []string{"context", "testing", "time", "github.com/agentloop/agentloop/store"}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		imports := map[string]string{} // local name → path
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = path
		}
		// uses reports the packages a piece of the API names.
		uses := func(n ast.Node, where string) {
			ast.Inspect(n, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); ok {
					if path, ok := imports[pkg.Name]; ok {
						require.Contains(t, allowed, path, "%s names %s.%s", where, pkg.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
					uses(d.Type, fset.Position(d.Pos()).String()+" "+d.Name.Name)
					checked++
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						checked++
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								if slices.ContainsFunc(field.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
									uses(field.Type, s.Name.Name+" field")
								}
							}
							continue
						}
						uses(s.Type, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								checked++
								if s.Type != nil {
									uses(s.Type, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	require.NotZero(t, checked, "no exported declarations found")
}

func exportedRecv(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
