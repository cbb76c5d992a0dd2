def greet(name):
    print('hey', name)


def main():
    greet('tether')
    return 0
