package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// The committed dashboard is what this command writes: run `go run .` here
// after changing panels.go.
func TestCommittedDashboardIsGenerated(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what panels.go generates; run `go run .` in docs/dashboards/build", output)
	}
}

// Every panel has an id of its own and a place on the grid no other panel
// takes.
func TestPanelsHaveIdsAndAGrid(t *testing.T) {
	raw, err := render()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			GridPos struct{ H, W, X, Y int }
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	ids := map[int]bool{}
	cells := map[[2]int]int{}
	for _, p := range d.Panels {
		if p.ID == 0 || ids[p.ID] {
			t.Errorf("panel id %d missing or taken twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W == 0 || g.H == 0 || g.X+g.W > 24 {
			t.Errorf("panel %d: grid %+v off the 24-column grid", p.ID, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, taken := cells[[2]int{x, y}]; taken {
					t.Fatalf("panels %d and %d overlap at %d,%d", other, p.ID, x, y)
				}
				cells[[2]int{x, y}] = p.ID
			}
		}
	}
}
