package headroom

import (
	"errors"
	"fmt"
)

// ErrConfig is what every configuration error in the module matches:
// errors.Is(err, ErrConfig) holds for each *ConfigError, for the errors that
// join several of them, and for an httpx client whose layers are in the
// wrong order.
var ErrConfig = errors.New("invalid configuration")

// ConfigError is one problem with a configuration: which field, the value it
// had, and what would be right. Constructors and Validate methods report
// every problem at once, joined with errors.Join; errors.As finds the first
// and the joined error's Unwrap() []error lists them all.
type ConfigError struct {
	// Package is the package that found the problem, e.g. "limit"; it starts
	// the message.
	Package string
	// Field names the setting, e.g. "PerWindow.Window" or
	// `hosts["api.example.com"].rateLimit`.
	Field string
	Value any
	// Want says what would be right, e.g. "a duration above 0".
	Want string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: %s = %v: want %s", e.Package, e.Field, e.Value, e.Want)
}

// Is makes errors.Is(err, ErrConfig) hold.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
