from evidenceqa.cli import app

app(prog_name="evidenceqa")
