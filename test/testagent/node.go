package testagent

import (
	"fmt"
	"testing"
)

// ReadyNode registers node id through the client API of the server at
// addr, as its client would — class compute in dc1, linux, with cpu MHz,
// memMB of memory and a healthy exec driver — and reports it ready.
func ReadyNode(t testing.TB, addr, id string, cpu, memMB int) {
	t.Helper()
	PutOK(t, addr, "/v1/client/register", fmt.Sprintf(`{"ID":%q,"Name":%q,"Datacenter":"dc1","NodeClass":"compute",`+
		`"Attributes":{"kernel.name":"linux"},"Resources":{"CPU":%d,"MemoryMB":%d,"DiskMB":10000},`+
		`"Drivers":{"exec":{"Detected":true,"Healthy":true}}}`, id, id, cpu, memMB))
	PutOK(t, addr, "/v1/client/"+id+"/heartbeat", `{"Status":"ready"}`)
}
