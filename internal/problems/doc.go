// Package problems is the one validation path of the module: a List
// collects what is wrong with a configuration, so that every Validate and
// every constructor reports every problem at once, each a
// *headroom.ConfigError created once, with the name the user wrote: the Go
// field path for a configuration written in Go ("PerWindow.Window"), the
// JSON path for one read from JSON (`limiters["github"].perWindow.window`).
//
// A List has a path prefix: At and Entry make the List of a nested setting,
// so that the code that checks a setting names its fields alone and the
// List says where they sit. A package whose options another package's
// options hold registers its check (Register); the holder runs it under
// its own List (Check), so that the check is written once and its errors
// carry the holder's package and path.
package problems
