package testagent

import (
	"io"
	"net/http"
	"testing"
)

// SaveSnapshot GETs a snapshot file of the whole state from the server at
// addr (forwarded to the leader by a follower), failing t unless it is
// answered 200.
func SaveSnapshot(t testing.TB, addr string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/operator/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("snapshot save: %s %v: %s", resp.Status, err, b)
	}
	return b
}

// RestoreSnapshot PUTs snapshot file to the server at addr (ordo operator
// snapshot restore) and returns the status and body answered.
func RestoreSnapshot(t testing.TB, addr string, file []byte) (int, []byte) {
	t.Helper()
	ans := Call(t, addr, http.MethodPut, "/v1/operator/snapshot", string(file))
	return ans.Status, []byte(ans.Body)
}
