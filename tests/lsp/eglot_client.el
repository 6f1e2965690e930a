;;; eglot_client.el --- drives `xpuify lsp' from a real editor: Emacs (batch) with eglot  -*- lexical-binding: t -*-
;; The second editor beside Neovim (nvim_client.lua). Opens FILE, starts eglot on it, waits for the diagnostics
;; to reach Flymake, hovers the first XPU202 finding, applies its quick fix and then source.fixAll.xpuify through
;; eglot's own code-action path, and ends with `eglot-shutdown' (shutdown with "params": null, then exit).
;; Writes what happened to $OUT: "diagnostics N" and "codes ...", "hover: first line", "step: title",
;; "before N", "after M", "shutdown: ok|error ...", then "--- buffer" and the buffer. Usage:
;;   LSP_CMD="xpuify lsp" OUT=result.txt emacs --batch -Q -l eglot_client.el FILE
(require 'eglot)
(require 'python)

(defvar xp-out nil "Lines for $OUT, newest first.")
(defun xp-say (fmt &rest args) (push (apply #'format fmt args) xp-out))

(defun xp-finish (&optional err)
  (when err (xp-say "error: %s" err))
  (xp-say "--- buffer")
  (let ((text (buffer-substring-no-properties (point-min) (point-max))))
    (with-temp-file (getenv "OUT")
      (insert (mapconcat #'identity (reverse xp-out) "\n") "\n" text)))
  (kill-emacs 0))

(defun xp-wait (pred secs)
  "Process input until PRED holds or SECS pass; the value of PRED."
  (let ((deadline (+ (float-time) secs)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    v))

(defun xp-lsp-diags ()
  "The LSP diagnostics Flymake holds for this buffer (eglot keeps each one's raw dict)."
  (delq nil (mapcar (lambda (d) (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))))
                    (flymake-diagnostics))))

(defun xp-apply (step beg end kind)
  "Ask the server for KIND actions over BEG..END and apply the first as eglot does when one is chosen."
  (let* ((server (eglot-current-server))
         (actions (eglot-code-actions beg end kind))
         (n (length (xp-lsp-diags))))
    (if (null actions)
        nil
      (let ((a (car actions)))
        (eglot--read-execute-code-action (list a) server kind)
        ;; eglot sends didChange on an idle timer; batch Emacs is never idle, so send it now
        (eglot--signal-textDocument/didChange)
        (xp-wait (lambda () (< (length (xp-lsp-diags)) n)) 15)
        (xp-say "%s: %s" step (plist-get a :title))
        (xp-say "before %d" n)
        (xp-say "after %d" (length (xp-lsp-diags)))
        t))))

(setq eglot-server-programs `((python-mode . ,(split-string (getenv "LSP_CMD")))))
(setq eglot-sync-connect t eglot-autoshutdown nil eglot-events-buffer-size 0)
(setq flymake-no-changes-timeout 0.2)
(find-file (car command-line-args-left))
(setq command-line-args-left nil)
(python-mode)
(condition-case err
    (apply #'eglot (eglot--guess-contact))
  (error (xp-finish (format "eglot did not start: %S" err))))
(unless (eglot-current-server) (xp-finish "no server manages the buffer"))
(flymake-mode 1)
(flymake-start)
(unless (xp-wait (lambda () (xp-lsp-diags)) 20) (xp-finish "no diagnostics"))
(let ((ds (xp-lsp-diags)))
  (xp-say "diagnostics %d" (length ds))
  (xp-say "codes %s" (mapconcat (lambda (d) (format "%s" (plist-get d :code))) ds " ")))

(let* ((fd (seq-find (lambda (d) (equal (plist-get (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))) :code)
                                        "XPU202"))
                     (flymake-diagnostics))))
  (unless fd (xp-finish "no XPU202 finding"))
  ;; hover at the finding, through the request eglot's eldoc function sends
  (goto-char (flymake-diagnostic-beg fd))
  (let* ((h (jsonrpc-request (eglot-current-server) :textDocument/hover (eglot--TextDocumentPositionParams)))
         (contents (plist-get h :contents))
         (text (cond ((stringp contents) contents)
                     ((plist-get contents :value))
                     (t (format "%S" contents)))))
    (xp-say "hover: %s" (car (split-string (or text "") "\n"))))
  (unless (xp-apply "quickfix" (flymake-diagnostic-beg fd) (flymake-diagnostic-end fd) "quickfix")
    (xp-finish "no quick fix")))
(unless (xp-apply "fixall" (point-min) (point-min) "source.fixAll.xpuify") (xp-finish "no fix-all"))

;; eglot-shutdown sends shutdown with "params": null; a server that refuses it makes this signal (Emacs 28's
;; jsonrpc deletes the process right after `exit' either way, so the exit status is not the editor's to see)
(condition-case err
    (progn (eglot-shutdown (eglot-current-server) nil 5) (xp-say "shutdown: ok"))
  (error (xp-say "shutdown: error %S" err)))
(xp-finish)
