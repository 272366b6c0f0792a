package plan

// WithPlaced exposes withPlaced to the external tests.
var WithPlaced = withPlaced
