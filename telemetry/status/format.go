package status

import "strconv"

// formatFloat writes v with up to three decimals.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
