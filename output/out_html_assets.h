/* out_html_assets: the report page's inline CSS and JavaScript. */
#ifndef OUT_HTML_ASSETS_H
#define OUT_HTML_ASSETS_H
extern const char out_html_css[];
extern const char out_html_js[];
#endif
