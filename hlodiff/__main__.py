from hlodiff.cli import main

main()
