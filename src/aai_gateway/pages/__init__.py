"""One-time pages on 127.0.0.1 for the user's browser, out of the agent's sight: the server and
its defences (`local_page.py`) and the HTML every page shares (`html.py`). The credential page
(auth/) and the consent page (consent/) build on them; server/pages.py keeps them open between
the rounds of a call."""
