package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// parseFile parses the Go file at path, failing t when it cannot.
func parseFile(t *testing.T, path string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fset, file
}

// checkTimeCalls reports each call in file of a time package function
// that calls names, saying why it is not allowed there.
func checkTimeCalls(t *testing.T, fset *token.FileSet, file *ast.File, calls map[string]bool, why string) {
	t.Helper()
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && calls[sel.Sel.Name] {
			t.Errorf("%s: calls time.%s; %s", fset.Position(sel.Pos()), sel.Sel.Name, why)
		}
		return true
	})
}
