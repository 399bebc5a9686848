from evidenceqa.cli import main

main()
