// Package human formats quantities for people reading a terminal or a page:
// numbers, shares, rates and durations with three significant digits and
// their unit, byte counts and elapsed times. The CLI, the dashboard, the
// PetClinic evaluation and demo, and the benchmarks' progress lines share it,
// and the numbers are the runtime's own formatter (settings.HumanNum and its
// kin, which the monitor's explanations use), so one quantity reads the same
// everywhere. Machine-readable output (JSON, /metrics, CSV) does not go
// through it: it keeps full precision.
package human
