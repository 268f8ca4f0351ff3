package acceptance

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// CostMix is what the calls of a cell cost, in units: Costs[i] drawn with
// probability Weights[i] / sum(Weights). Each call sends its cost in
// CostHeader.
type CostMix struct {
	Costs   []int
	Weights []int
}

// The mixes the matrix uses.
var (
	// CostOne makes every call cost one unit: the only mix for a server that
	// counts requests, not units (ServerSpec.Costs false).
	CostOne = CostMix{Costs: []int{1}, Weights: []int{1}}
	// CostMixed draws 1, 2 or 5 units with weights 55, 35 and 10: a mean of
	// 1.75 units a call.
	CostMixed = CostMix{Costs: []int{1, 2, 5}, Weights: []int{55, 35, 10}}
)

// Validate reports what is wrong with m: no costs, lengths that differ, a
// cost below 1, a negative weight, or weights that sum to 0.
func (m CostMix) Validate() error {
	if len(m.Costs) == 0 {
		return fmt.Errorf("cost mix: no costs")
	}
	if len(m.Costs) != len(m.Weights) {
		return fmt.Errorf("cost mix: %d costs but %d weights", len(m.Costs), len(m.Weights))
	}
	total := 0
	for i, c := range m.Costs {
		if c < 1 {
			return fmt.Errorf("cost mix: cost %d is %d, want 1 or more", i, c)
		}
		if m.Weights[i] < 0 {
			return fmt.Errorf("cost mix: weight %d is %d, want 0 or more", i, m.Weights[i])
		}
		total += m.Weights[i]
	}
	if total == 0 {
		return fmt.Errorf("cost mix: the weights sum to 0")
	}
	return nil
}

// Draw picks a cost with r. m must be valid.
func (m CostMix) Draw(r *rand.Rand) int {
	total := 0
	for _, w := range m.Weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range m.Weights {
		if n < w {
			return m.Costs[i]
		}
		n -= w
	}
	return m.Costs[len(m.Costs)-1] // unreachable for a valid mix
}

// Mean is the expected cost of a call.
func (m CostMix) Mean() float64 {
	var sum, total float64
	for i, c := range m.Costs {
		sum += float64(c * m.Weights[i])
		total += float64(m.Weights[i])
	}
	if total == 0 {
		return 0
	}
	return sum / total
}

// Max is the largest cost a call may have.
func (m CostMix) Max() int {
	largest := 0
	for i, c := range m.Costs {
		if m.Weights[i] > 0 && c > largest {
			largest = c
		}
	}
	return largest
}

// String is "1" for a single cost, or the costs and their weights, e.g.
// "1/2/5 (55/35/10)".
func (m CostMix) String() string {
	if len(m.Costs) == 1 {
		return strconv.Itoa(m.Costs[0])
	}
	costs := make([]string, len(m.Costs))
	weights := make([]string, len(m.Weights))
	for i := range m.Costs {
		costs[i] = strconv.Itoa(m.Costs[i])
	}
	for i := range m.Weights {
		weights[i] = strconv.Itoa(m.Weights[i])
	}
	return strings.Join(costs, "/") + " (" + strings.Join(weights, "/") + ")"
}
