// Command surface counts the exported surface of the module: the exported
// top-level identifiers and the exported methods of exported types, per
// package, over the non-test files of every package that is not internal
// (the acceptance, bench and examples modules and the commands left out).
//
//	go run ./internal/cmd/surface [-v] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// skipped are the folders whose packages users never import.
var skipped = map[string]bool{"acceptance": true, "bench": true, "internal": true, "testdata": true, "cmd": true, "examples": true}

type count struct{ top, methods int }

func main() {
	verbose := flag.Bool("v", false, "list every identifier")
	flag.Parse()
	root := flag.Arg(0)
	if root == "" {
		root = "."
	}
	perPackage, names, err := walk(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "surface:", err)
		os.Exit(1)
	}
	var total count
	for _, pkg := range sortedKeys(perPackage) {
		c := perPackage[pkg]
		fmt.Printf("%-20s %4d top %4d methods\n", pkg, c.top, c.methods)
		total.top += c.top
		total.methods += c.methods
	}
	fmt.Printf("%-20s %4d top %4d methods\n", "total", total.top, total.methods)
	if *verbose {
		sort.Strings(names)
		fmt.Println(strings.Join(names, "\n"))
	}
}

// walk counts every package below root.
func walk(root string) (map[string]count, []string, error) {
	perPackage := map[string]count{}
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (skipped[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(p))
		c := perPackage[pkg]
		for _, n := range exported(f) {
			if strings.HasPrefix(n, "method ") {
				c.methods++
			} else {
				c.top++
			}
			names = append(names, pkg+" "+n)
		}
		perPackage[pkg] = c
		return nil
	})
	return perPackage, names, err
}

// exported lists f's exported declarations, methods as "method T.M".
func exported(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, "func "+d.Name.Name)
			} else if recv := receiver(d.Recv.List[0].Type); ast.IsExported(recv) {
				out = append(out, "method "+recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out = append(out, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, "value "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiver is the name of a method's receiver type.
func receiver(t ast.Expr) string {
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func sortedKeys(m map[string]count) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
