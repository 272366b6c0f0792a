package nomadevents

// The topics of Nomad's stream that ordo serves.
const (
	TopicJob        = "Job"
	TopicAllocation = "Allocation"
	TopicEvaluation = "Evaluation"
	TopicDeployment = "Deployment"
	TopicNode       = "Node"
	TopicNodePool   = "NodePool"
	TopicNamespace  = "Namespace"
	TopicACLToken   = "ACLToken"
	TopicACLPolicy  = "ACLPolicy"
	TopicACLRole    = "ACLRole"
	TopicService    = "Service"
	// TopicAll in a subscription selects every topic.
	TopicAll = "*"
)

// Topics lists the topics served, in the order the manual lists them.
var Topics = []string{TopicJob, TopicAllocation, TopicEvaluation, TopicDeployment, TopicNode,
	TopicNodePool, TopicNamespace, TopicACLToken, TopicACLPolicy, TopicACLRole, TopicService}

// Management reports whether topic is one Nomad serves only to
// management tokens (the ACL topics, and NodePool).
func Management(topic string) bool {
	switch topic {
	case TopicACLToken, TopicACLPolicy, TopicACLRole, TopicNodePool, TopicAll:
		return true
	}
	return false
}

// Namespaced reports whether topic's events belong to a namespace, so that
// a subscription's namespace and read-job capability apply to them.
func Namespaced(topic string) bool {
	switch topic {
	case TopicJob, TopicAllocation, TopicEvaluation, TopicDeployment, TopicService:
		return true
	}
	return false
}
