package page

import "github.com/headroom-go/headroom/sim"

// Catalog is what the page's controls offer, read from the simulator, so
// that a mode, a kind of server or a header dialect added to it appears on
// the page as it is.
type Catalog struct {
	Modes       []ModeInfo `json:"modes"`
	Scenarios   []string   `json:"scenarios"`
	ServerKinds []string   `json:"serverKinds"`
	// Bursts lists the kinds that have a bucket whose depth the burst sets.
	Bursts    []string `json:"bursts"`
	Publishes []string `json:"publishes"`
	Defaults  World    `json:"defaults"`
	// RowHeader names the columns of a live run's table (Point.Row).
	RowHeader []string `json:"rowHeader"`
}

// ModeInfo is one mode and its options.
type ModeInfo struct {
	Name     string        `json:"name"`
	Flag     string        `json:"flag"`
	Settings []sim.Setting `json:"settings"`
}

// NewCatalog reads the catalog from the simulator.
func NewCatalog() Catalog {
	c := Catalog{Scenarios: sim.Scenarios(), ServerKinds: sim.ServerKinds(), Publishes: sim.Publishes(), Defaults: DefaultWorld(), RowHeader: RowHeader}
	for _, m := range sim.Modes() {
		c.Modes = append(c.Modes, ModeInfo{Name: m.Name, Flag: ModeFlag(m.Name), Settings: m.Settings()})
	}
	for _, k := range c.ServerKinds {
		if sim.HasBurst(k) {
			c.Bursts = append(c.Bursts, k)
		}
	}
	return c
}
