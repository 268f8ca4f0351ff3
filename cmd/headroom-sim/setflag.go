package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/headroom-go/headroom/sim"
)

// applySettings reads -set, NAME=VALUE pairs separated by commas, and
// rebuilds each mode of modes that has a setting NAME with the values of
// its own settings (sim.Mode.With). A name that none of modes has, a value
// that is not a number, and a value a mode refuses are problems, appended
// to errs.
func applySettings(s string, modes []sim.Mode, errs []error) ([]sim.Mode, []error) {
	if strings.TrimSpace(s) == "" {
		return modes, errs
	}
	values := map[string]float64{}
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || name == "" || err != nil {
			errs = append(errs, fmt.Errorf("-set %q: want NAME=VALUE pairs such as IncreaseStep=600,MaxUnitsPerMinute=2700", pair))
			continue
		}
		values[strings.TrimSpace(name)] = v
	}
	used := map[string]bool{}
	out := make([]sim.Mode, 0, len(modes))
	for _, m := range modes {
		own := map[string]float64{}
		for _, st := range m.Settings() {
			if v, ok := values[st.Name]; ok {
				own[st.Name] = v
				used[st.Name] = true
			}
		}
		rebuilt, err := m.With(own)
		if err != nil {
			errs = append(errs, err)
			rebuilt = m
		}
		out = append(out, rebuilt)
	}
	var unknown []string
	for name := range values {
		if !used[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		errs = append(errs, fmt.Errorf("-set %s: no mode of -modes has that setting; %s", name, settingsOf(modes)))
	}
	return out, errs
}

// settingsOf names the settings of each mode: "AIMD takes IncreaseStep,
// …; quota guard takes …".
func settingsOf(modes []sim.Mode) string {
	var parts []string
	for _, m := range modes {
		var names []string
		for _, st := range m.Settings() {
			names = append(names, st.Name)
		}
		if len(names) > 0 {
			parts = append(parts, m.Name+" takes "+strings.Join(names, ", "))
		}
	}
	if len(parts) == 0 {
		return "these modes take none"
	}
	return strings.Join(parts, "; ")
}
