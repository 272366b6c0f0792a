package commandstest

// Permutations returns every ordering of steps, for tests that run the
// same commands in every order.
func Permutations(steps []string) [][]string {
	if len(steps) <= 1 {
		return [][]string{append([]string(nil), steps...)}
	}
	var out [][]string
	for i, s := range steps {
		rest := append(append([]string(nil), steps[:i]...), steps[i+1:]...)
		for _, p := range Permutations(rest) {
			out = append(out, append([]string{s}, p...))
		}
	}
	return out
}
