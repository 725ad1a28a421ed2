package mockserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// The admin routes and the dashboard ask for a user name and password
// when the server is given an htpasswd file of user:bcrypt-hash lines; the
// /v1 API keeps its keys.
func ExampleWithAdminAuth() {
	// Cost 10 (bcrypt.DefaultCost) or more for a real password: what a
	// guess costs. The lowest here, so that the example runs fast.
	hash, _ := bcrypt.GenerateFromPassword([]byte("a long passphrase"), bcrypt.MinCost)
	srv, err := mockserver.Open(mockserver.WithAdminAuth(strings.NewReader("admin:" + string(hash) + "\n")))
	if err != nil {
		panic(err) // a bad file: the error names the line and what is wrong with it
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	for _, pass := range []string{"", "a wrong guess", "a long passphrase"} {
		req, _ := http.NewRequest("GET", hs.URL+"/_mock/clock", nil)
		if pass != "" {
			req.SetBasicAuth("admin", pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(res.Status, res.Header.Get("WWW-Authenticate"))
	}
	// Output:
	// 401 Unauthorized Basic realm="contextsvc-mock admin", charset="UTF-8"
	// 401 Unauthorized Basic realm="contextsvc-mock admin", charset="UTF-8"
	// 200 OK
}
