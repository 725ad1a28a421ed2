package browsertest

import (
	"context"
	"fmt"
	"os"

	"github.com/chromedp/chromedp"
)

// Screenshot is an action that takes a PNG of the whole page (beyond the
// viewport, top to bottom) and writes it to path, replacing any file
// there:
//
//	err := chromedp.Do(ctx, chromedp.Navigate(url), browsertest.Screenshot("docs/dashboard.png"))
func Screenshot(path string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, t) // quality 100 is PNG
		if err != nil {
			return fmt.Errorf("browsertest: screenshot: %w", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			return fmt.Errorf("browsertest: screenshot: %w", err)
		}
		return nil
	})
}
