// Command oracle answers questions about node addresses with upstream's own code, at the release
// the test control plane runs (go.sum), for the project's differential property tests: one JSON
// request per line on stdin, one JSON answer per line on stdout, in order.
//
//	{"op":"refresh","node":{...},"cloud":[...]}      k8s.io/cloud-provider's CloudNodeController.UpdateNodeStatus,
//	                                                 the real controller over a fake clientset and its own fake cloud:
//	                                                 {"addresses":[...],"patched":bool}
//	{"op":"hostIPs","addresses":[...]}               k8s.io/kubernetes pkg/util/node.GetNodeHostIPs: {"ips":[...]} or {"error":...}
//	{"op":"fromNodeIP","annotation":"...","cloud":[...]}
//	                                                 k8s.io/cloud-provider node/helpers.GetNodeAddressesFromNodeIP:
//	                                                 {"addresses":[...]} or {"error":...}
//	{"op":"parseAnnotation","annotation":"..."}      k8s.io/component-helpers node/util.ParseNodeIPAnnotation: {"ips":[...]} or {"error":...}
//
// Nothing here re-implements a rule: each answer is what the named upstream function returns.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"
	nodecontroller "k8s.io/cloud-provider/controllers/node"
	fakecloud "k8s.io/cloud-provider/fake"
	cloudnodeutil "k8s.io/cloud-provider/node/helpers"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/klog/v2"
	k8snode "k8s.io/kubernetes/pkg/util/node"
)

type request struct {
	Op         string           `json:"op"`
	Node       *v1.Node         `json:"node,omitempty"`
	Cloud      []v1.NodeAddress `json:"cloud,omitempty"`
	Addresses  []v1.NodeAddress `json:"addresses,omitempty"`
	Annotation string           `json:"annotation,omitempty"`
}

type answer struct {
	Addresses []v1.NodeAddress `json:"addresses,omitempty"`
	Patched   *bool            `json:"patched,omitempty"`
	IPs       []string         `json:"ips,omitempty"`
	Error     string           `json:"error,omitempty"`
}

func main() {
	// The controller logs each refused annotation; the answers are what matters here.
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		var ans answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			ans.Error = "oracle: bad request: " + err.Error()
		} else {
			ans = handle(req)
		}
		if err := enc.Encode(ans); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(1)
		}
		// One answer per request as it comes: the caller may wait for each.
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
}

func handle(req request) answer {
	switch req.Op {
	case "refresh":
		return refresh(req.Node, req.Cloud)
	case "hostIPs":
		ips, err := k8snode.GetNodeHostIPs(&v1.Node{Status: v1.NodeStatus{Addresses: req.Addresses}})
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{IPs: ipStrings(ips)}
	case "fromNodeIP":
		addrs, err := cloudnodeutil.GetNodeAddressesFromNodeIP(req.Annotation, req.Cloud)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Addresses: nonNil(addrs)}
	case "parseAnnotation":
		ips, err := nodeutil.ParseNodeIPAnnotation(req.Annotation)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{IPs: ipStrings(ips)}
	default:
		return answer{Error: fmt.Sprintf("oracle: unknown op %q", req.Op)}
	}
}

// refresh runs upstream's cloud node controller's periodic address update (UpdateNodeStatus) for
// one initialised node whose cloud reports `cloud`, and returns the node's addresses afterwards
// and whether the controller patched them.
func refresh(node *v1.Node, cloud []v1.NodeAddress) answer {
	if node == nil {
		return answer{Error: "oracle: refresh needs a node"}
	}
	if node.Name == "" {
		node.Name = "node"
	}
	node.ResourceVersion = ""
	client := fake.NewSimpleClientset(node)
	factory := informers.NewSharedInformerFactory(client, 0)
	nodeInformer := factory.Core().V1().Nodes()
	fc := &fakecloud.Cloud{
		EnableInstancesV2: true,
		OverrideInstanceMetadata: func(context.Context, *v1.Node) (*cloudprovider.InstanceMetadata, error) {
			return &cloudprovider.InstanceMetadata{ProviderID: node.Spec.ProviderID, NodeAddresses: cloud}, nil
		},
	}
	cnc, err := nodecontroller.NewCloudNodeController(nodeInformer, client, fc, time.Hour, 1)
	if err != nil {
		return answer{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The lister reads the informer's store: filled directly, as a synced informer would hold the
	// node, without the informer's 100 ms sync poll per question.
	if err := nodeInformer.Informer().GetIndexer().Add(node.DeepCopy()); err != nil {
		return answer{Error: err.Error()}
	}
	before := len(client.Actions())
	if err := cnc.UpdateNodeStatus(ctx); err != nil {
		return answer{Error: err.Error()}
	}
	patched := false
	for _, a := range client.Actions()[before:] {
		if a.GetVerb() == "patch" {
			patched = true
		}
	}
	got, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Addresses: nonNil(got.Status.Addresses), Patched: &patched}
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

func nonNil(a []v1.NodeAddress) []v1.NodeAddress {
	if a == nil {
		return []v1.NodeAddress{}
	}
	return a
}
