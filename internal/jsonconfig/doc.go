// Package jsonconfig reads a JSON configuration as encoding/json does, but
// reports every problem at once, each where it is, instead of stopping at
// the first: a value of the wrong type, an unknown field (which
// encoding/json would silently drop, leaving a default in disguise),
// malformed JSON at its line and column, data after the document. What did
// decode is left in place for a Validate method to judge, and Rename spells
// the Go field paths such a method names ("PerWindow.Window") as the JSON
// paths of the same settings ("perWindow.window"): package problems calls
// it when it creates each problem, so that all of one document's problems
// name their places alike.
//
// A path names an object's member with a dot ("resilience.timeout"), a map
// entry by its quoted key (`limiters["github"]`) and a list item by its
// index ("hosts[2]"). Problems are neutral: package problems turns each
// into a *headroom.ConfigError of the parser's package.
package jsonconfig
