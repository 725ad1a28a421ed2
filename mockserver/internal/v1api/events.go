package v1api

import contextsvc "github.com/contextsvc/contextsvc-go"

// The data of the events the /v1 API fires, as the contract's event table
// shapes them (context.published is fired by the service, by hand).
type (
	contextCreatedData struct {
		ContextID string   `json:"contextId"`
		Name      string   `json:"name"`
		Version   int      `json:"version"`
		Tags      []string `json:"tags"`
		CreatedBy string   `json:"createdBy"`
	}
	contextUpdatedData struct {
		ContextID string             `json:"contextId"`
		Name      string             `json:"name"`
		Version   int                `json:"version"`
		UpdatedBy string             `json:"updatedBy"`
		Changes   contextsvc.Changes `json:"changes"`
	}
	contextDeletedData struct {
		ContextID string `json:"contextId"`
		Name      string `json:"name"`
		DeletedBy string `json:"deletedBy"`
	}
	versionCreatedData struct {
		ContextID string `json:"contextId"`
		Version   int    `json:"version"`
		CreatedBy string `json:"createdBy"`
	}
	exportCompletedData struct {
		ExportID  string `json:"exportId"`
		ContextID string `json:"contextId"`
		Version   int    `json:"version"`
		Format    string `json:"format"`
		SizeBytes int    `json:"sizeBytes"`
	}
)
