//go:build js && wasm

// Command wasm is the simulator in the browser: compiled with GOOS=js
// GOARCH=wasm, it sets a global headroomSim whose functions the page's
// JavaScript calls with JSON and that answer with JSON, every figure
// computed by package page from the simulator itself. It then calls the
// page's headroomSimReady, when the page has one, and runs until the page
// closes.
//
//	catalog()                  the modes, their settings, the scenarios, the servers, the dialects
//	start(settings)            {id} of a new live run, or {error}
//	advance(id, seconds)       runs it to that time
//	frame(id, from)            its clock, tiles and the seconds sampled from the from-th on
//	stop(id)                   forgets it
//	compare(world, modes)      the comparison's title, header, footer and command
//	compareMode(world, mode)   one mode's row and small chart
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/page"
)

func main() {
	runs := map[int]*page.Live{}
	next := 0
	api := map[string]func(args []js.Value) any{
		"catalog": func([]js.Value) any { return page.NewCatalog() },
		"start": func(args []js.Value) any {
			var s page.Settings
			if err := decode(args, 0, &s); err != nil {
				return failure(err)
			}
			l, err := page.Start(s)
			if err != nil {
				return failure(err)
			}
			next++
			runs[next] = l
			return map[string]int{"id": next}
		},
		"advance": func(args []js.Value) any {
			if l := runs[arg(args, 0).Int()]; l != nil {
				l.Advance(arg(args, 1).Float())
			}
			return nil
		},
		"frame": func(args []js.Value) any {
			l := runs[arg(args, 0).Int()]
			if l == nil {
				return map[string]string{"error": "no such run"}
			}
			return l.Frame(arg(args, 1).Int())
		},
		"stop": func(args []js.Value) any {
			delete(runs, arg(args, 0).Int())
			return nil
		},
		"compare": func(args []js.Value) any {
			var w page.World
			var modes []string
			if err := decode(args, 0, &w); err != nil {
				return failure(err)
			}
			if err := decode(args, 1, &modes); err != nil {
				return failure(err)
			}
			c, err := page.Compare(w, modes)
			if err != nil {
				return failure(err)
			}
			return c
		},
		"compareMode": func(args []js.Value) any {
			var w page.World
			if err := decode(args, 0, &w); err != nil {
				return failure(err)
			}
			row, err := page.CompareMode(w, arg(args, 1).String())
			if err != nil {
				return failure(err)
			}
			return row
		},
	}
	obj := js.Global().Get("Object").New()
	for name, f := range api {
		obj.Set(name, js.FuncOf(func(this js.Value, args []js.Value) any {
			b, err := json.Marshal(f(args))
			if err != nil {
				b, _ = json.Marshal(failure(err))
			}
			return string(b)
		}))
	}
	js.Global().Set("headroomSim", obj)
	if ready := js.Global().Get("headroomSimReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// arg is args[i], or undefined.
func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// decode reads args[i], a JSON string, into v.
func decode(args []js.Value, i int, v any) error {
	a := arg(args, i)
	if a.Type() != js.TypeString {
		return json.Unmarshal([]byte("null"), v)
	}
	return json.Unmarshal([]byte(a.String()), v)
}

func failure(err error) map[string]string { return map[string]string{"error": err.Error()} }
