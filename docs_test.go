package headroom_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// snippetImports are the packages a snippet of the docs may name without
// importing them, by the name it uses.
var snippetImports = map[string]string{
	"adaptive":   "github.com/headroom-go/headroom/limit/adaptive",
	"context":    "context",
	"errors":     "errors",
	"fleet":      "github.com/headroom-go/headroom/fleet",
	"fmt":        "fmt",
	"headroom":   "github.com/headroom-go/headroom",
	"http":       "net/http",
	"httpx":      "github.com/headroom-go/headroom/httpx",
	"limit":      "github.com/headroom-go/headroom/limit",
	"quota":      "github.com/headroom-go/headroom/limit/quota",
	"redis":      "github.com/redis/go-redis/v9",
	"resilience": "github.com/headroom-go/headroom/resilience",
	"sim":        "github.com/headroom-go/headroom/sim",
	"status":     "github.com/headroom-go/headroom/telemetry/status",
	"telemetry":  "github.com/headroom-go/headroom/telemetry",
	"time":       "time",
}

// snippetPrelude is what a snippet may use without declaring it: the
// caller's context, the call the limiters guard, and the policy an earlier
// snippet of the page built.
const snippetPrelude = `
var ctx context.Context

var policy *resilience.Policy

func fetch(context.Context) ([]byte, error) { return nil, nil }
`

// A snippet is one Go code block of a document.
type snippet struct {
	doc  string
	line int
	code string
}

var goBlock = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// docSnippets lists the Go blocks of the README and of every page of docs/.
func docSnippets(t *testing.T) []snippet {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	for _, doc := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllSubmatchIndex(b, -1) {
			out = append(out, snippet{doc, 1 + strings.Count(string(b[:m[0]]), "\n"), string(b[m[2]:m[3]])})
		}
	}
	return out
}

// source is s as a Go file: as it is when it is one, else its statements
// in a function body, with the imports it names and the prelude.
func (s snippet) source() string {
	if strings.HasPrefix(strings.TrimSpace(s.code), "package ") {
		return s.code
	}
	var b strings.Builder
	b.WriteString("package snippet\n\nimport (\n")
	for _, name := range slices.Sorted(mapKeys(snippetImports)) {
		if name == "context" || name == "resilience" || regexp.MustCompile(`\b`+name+`\.`).MatchString(s.code) {
			fmt.Fprintf(&b, "\t%s %q\n", name, snippetImports[name])
		}
	}
	b.WriteString(")\n" + snippetPrelude + "\nfunc _() error {\n" + s.code + "\nreturn nil\n}\n")
	return b.String()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Every Go block of the README and of docs/ compiles against the code as it
// is: a block of statements as the body of a function that returns an
// error, with ctx, policy and fetch declared. A variable it declares and leaves
// unused is no fault of a snippet's.
func TestDocSnippetsCompile(t *testing.T) {
	snippets := docSnippets(t)
	if len(snippets) == 0 {
		t.Fatal("no Go snippet found in the README or docs/")
	}
	exports := exportData(t, slices.Collect(func(yield func(string) bool) {
		for _, p := range snippetImports {
			if !yield(p) {
				return
			}
		}
	}))
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, s := range snippets {
		src := s.source()
		f, err := parser.ParseFile(fset, s.doc, src, 0)
		if err != nil {
			t.Errorf("%s:%d: the snippet does not parse: %v\n%s", s.doc, s.line, err, src)
			continue
		}
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) && strings.Contains(te.Msg, "declared and not used") {
				return
			}
			errs = append(errs, err.Error())
		}}
		conf.Check("snippet", fset, []*ast.File{f}, nil)
		if len(errs) > 0 {
			t.Errorf("%s:%d: the snippet does not compile:\n%s\n%s", s.doc, s.line, strings.Join(errs, "\n"), src)
		}
	}
}

// exportData builds paths and what they import, and returns the export
// data file of each package.
func exportData(t *testing.T, paths []string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, paths...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	files := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		files[p.ImportPath] = p.Export
	}
	return files
}
